import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import { Conflict, NotFound, ValidationError } from "../http/Errors.js"
import { type Agent, AgentLifecycle, type AgentStatus, type CreateAgent, type UpdateAgent } from "./Agent.js"
import { type AgentFilter, AgentsRepo } from "./AgentsRepo.js"

/** Clock skew tolerated on a lastActiveAt sent by a client. */
const SKEW_MILLIS = 60_000

/** The activity kind of a status change: agent.activated, agent.idled, agent.paused, agent.retired. */
const VERB: Record<AgentStatus, string> = { active: "activated", idle: "idled", paused: "paused", retired: "retired" }

/**
 * The lab's AI agents. Their lifecycle is enforced (retired is final); other
 * features attribute work to an agent through `requireAgent` and `touch`
 * (memory, standups, contributions).
 */
export class Agents extends Effect.Service<Agents>()("Agents", {
  dependencies: [AgentsRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AgentsRepo
    const activity = yield* ActivityRepo

    const notFound = (id: string) => new NotFound({ message: `no agent ${id} in this lab` })

    const get = (labId: string, id: string) =>
      Effect.flatMap(repo.find(labId, id), Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))

    const nameTaken = (labId: string, name: string, self?: string) =>
      Effect.flatMap(repo.findByName(labId, name), (found) =>
        Option.isSome(found) && found.value.id !== self
          ? Effect.fail(new Conflict({ message: `the lab has an agent named ${found.value.name} already: ${found.value.id}` }))
          : Effect.void
      )

    const uniqueName = (name: string) => (error: unknown) =>
      isUniqueViolation(error)
        ? Effect.fail(new Conflict({ message: `the lab has an agent named ${name} already` }))
        : Effect.die(error)

    const create = (labId: string, input: Omit<CreateAgent, "labId">, actor: string) =>
      Effect.gen(function* () {
        yield* nameTaken(labId, input.name)
        const now = new Date()
        const agent: Agent = { id: newId("agent"), labId, ...input, status: "idle", lastActiveAt: null, createdAt: now, updatedAt: now }
        yield* Effect.catchAll(repo.insert(agent), uniqueName(input.name))
        yield* activity.record({
          labId,
          kind: "agent.created",
          ref: agent.id,
          actor,
          message: `Created agent ${agent.name} (${agent.model})`,
          data: { name: agent.name, role: agent.role, model: agent.model }
        })
        return agent
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const update = (labId: string, id: string, patch: Omit<UpdateAgent, "labId">, actor: string) =>
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(
          repo.findForUpdate(labId, id),
          Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed })
        )
        if (current.status === "retired") {
          return yield* new Conflict({ message: `agent ${id} is retired, a final state: it cannot be changed` })
        }
        const status = patch.status ?? current.status
        if (status !== current.status) yield* transition(`agent ${id}`, AgentLifecycle, current.status, status)
        if (patch.lastActiveAt !== undefined && patch.lastActiveAt.getTime() > Date.now() + SKEW_MILLIS) {
          return yield* new ValidationError({ message: "lastActiveAt: must not be in the future" })
        }
        if (patch.name !== undefined) yield* nameTaken(labId, patch.name, id)
        const next: Agent = {
          ...current,
          name: patch.name ?? current.name,
          role: patch.role ?? current.role,
          model: patch.model ?? current.model,
          status,
          lastActiveAt: patch.lastActiveAt ?? current.lastActiveAt
        }
        const changed = (["name", "role", "model", "status", "lastActiveAt"] as const).filter(
          (field) => String(next[field]?.valueOf()) !== String(current[field]?.valueOf())
        )
        if (changed.length === 0) return current
        const updated: Agent = { ...next, updatedAt: new Date() }
        yield* Effect.catchAll(repo.update(updated), uniqueName(updated.name))
        yield* activity.record({
          labId,
          kind: status !== current.status ? `agent.${VERB[status]}` : "agent.updated",
          ref: id,
          actor,
          message:
            status !== current.status
              ? `Agent ${updated.name}: ${current.status} → ${status}`
              : `Updated agent ${updated.name} (${changed.join(", ")})`,
          data: { changed, ...(status !== current.status ? { from: current.status, to: status } : {}) }
        })
        return updated
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const remove = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const deleted = yield* Effect.flatMap(
          repo.delete(labId, id),
          Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed })
        )
        yield* activity.record({
          labId,
          kind: "agent.deleted",
          ref: id,
          actor,
          message: `Deleted agent ${deleted.name}`,
          data: { name: deleted.name, status: deleted.status }
        })
        return deleted
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /**
     * The agent a write is attributed to, locked for the caller's transaction:
     * 422 naming `field` when the lab has no such agent, 409 when it is retired.
     */
    const requireAgent = (labId: string, agentId: string, field = "agentId"): Effect.Effect<Agent, ValidationError | Conflict> =>
      Effect.flatMap(
        repo.findForUpdate(labId, agentId),
        Option.match({
          onNone: () => Effect.fail(new ValidationError({ message: `${field}: no agent ${agentId} in this lab` })),
          onSome: (agent): Effect.Effect<Agent, ValidationError | Conflict> =>
            agent.status === "retired"
              ? Effect.fail(new Conflict({ message: `agent ${agentId} is retired: it cannot record anything` }))
              : Effect.succeed(agent)
        })
      )

    return {
      list: (labId: string, filter: AgentFilter) => repo.list(labId, filter),
      get,
      create,
      update,
      remove,
      requireAgent,
      /** The agent did something at `at`: lastActiveAt moves forward (in the caller's transaction). */
      touch: (labId: string, agentId: string, at: Date) => repo.touch(labId, agentId, at)
    }
  })
}) {}
