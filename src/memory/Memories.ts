import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, resourceReads } from "../activity/ResourceService.js"
import { Agents } from "../agents/Agents.js"
import { orNotFound } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateMemory, type MemoryEntry, MemoryId } from "./Memory.js"
import { MemoryRepo } from "./MemoryRepo.js"
import { inTransaction } from "../db/Transaction.js"

const preview = (content: string) => {
  const line = content.trim().split("\n")[0] ?? ""
  return line.length > 80 ? `${line.slice(0, 79)}…` : line
}

const RESOURCE = "memory entry"

/** Agents' memory entries: recorded by an agent of the lab (which becomes active at that moment), immutable, deletable. */
export class Memories extends Effect.Service<Memories>()("Memories", {
  dependencies: [MemoryRepo.Default, Agents.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity, agents } = yield* Effect.all({ ...resourceDeps(MemoryRepo), agents: Agents })

    const create = (labId: LabId, input: Omit<CreateMemory, "labId">, actor: string) =>
      Effect.gen(function* () {
        const agent = yield* agents.requireAgent(labId, input.agentId)
        const entry: MemoryEntry = { id: MemoryId.make(newId("mem")), labId, ...input, createdAt: new Date() }
        yield* repo.insert(entry)
        yield* agents.touch(labId, agent.id, entry.createdAt)
        yield* activity.record({
          labId,
          kind: "memory.created",
          ref: entry.id,
          actor,
          message: `${agent.name} remembered (${entry.kind}): ${preview(entry.content)}`,
          data: { agentId: agent.id, kind: entry.kind, importance: entry.importance }
        })
        return entry
      }).pipe(inTransaction(sql))

    const remove = (labId: LabId, id: MemoryId, actor: string) =>
      Effect.gen(function* () {
        const deleted = yield* orNotFound(RESOURCE, id)(repo.remove(labId, id))
        yield* activity.record({
          labId,
          kind: "memory.deleted",
          ref: id,
          actor,
          message: `Deleted a memory entry of agent ${deleted.agentId}`,
          data: { entryOf: deleted.agentId, kind: deleted.kind }
        })
        return deleted
      }).pipe(inTransaction(sql))

    return { ...resourceReads(RESOURCE, repo), create, remove }
  })
}) {}
