import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps, resourceReads } from "../activity/ResourceService.js"
import { Agents } from "../agents/Agents.js"
import { InvalidField, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import type { LabId } from "../labs/LabId.js"
import { type Author, type CreateStandup, type Standup, StandupId } from "./Standup.js"
import { StandupsRepo } from "./StandupsRepo.js"
import { inTransaction } from "../db/Transaction.js"

const DAY_MILLIS = 86_400_000
const today = (now: Date) => now.toISOString().slice(0, 10)

const describe = (author: Author) => `${author.kind} ${author.id}`

const RESOURCE = "standup"

interface Deps extends ResourceDeps<StandupsRepo> {
  readonly agents: Agents
}

const duplicate = (author: Author, date: string, existing?: string) =>
  new StateConflict({
    resource: RESOURCE,
    id: existing ?? describe(author),
    problem: `${describe(author)} has a standup for ${date} already${existing ? `: ${existing}` : ""}; one per author and day`
  })

/** The day a new standup reports on: 422 when it is more than a day ahead or says nothing. */
const checkInput = (input: Omit<CreateStandup, "labId">, now: Date) => {
  const date = input.date ?? today(now)
  if (date > today(new Date(now.getTime() + DAY_MILLIS))) {
    return Effect.fail(new InvalidField({ field: "date", problem: `${date} is more than a day ahead` }))
  }
  if (input.done.length + input.planned.length + input.blockers.length === 0) {
    return Effect.fail(new InvalidField({ field: "done, planned, blockers", problem: "a standup needs at least one line" }))
  }
  return Effect.succeed(date)
}

const create = ({ sql, repo, agents, activity }: Deps, labId: LabId, input: Omit<CreateStandup, "labId">, actor: string) =>
  Effect.gen(function* () {
    const now = new Date()
    const date = yield* checkInput(input, now)
    const author: Author = input.author ?? { kind: "member", id: actor }
    const agent = author.kind === "agent" ? Option.some(yield* agents.requireAgent(labId, author.id, "author.id")) : Option.none()
    const existing = yield* repo.findByAuthor(labId, author, date)
    if (Option.isSome(existing)) return yield* duplicate(author, date, existing.value.id)
    const { done, planned, blockers } = input
    const standup: Standup = { id: StandupId.make(newId("std")), labId, date, author, done, planned, blockers, createdAt: now }
    yield* Effect.catchAll(repo.insert(standup), (error) =>
      isUniqueViolation(error) ? Effect.fail(duplicate(author, date)) : Effect.die(error)
    )
    if (Option.isSome(agent)) yield* agents.touch(labId, agent.value.id, now)
    yield* activity.record({
      labId,
      kind: "standup.created",
      ref: standup.id,
      actor,
      message: `Standup of ${Option.match(agent, { onNone: () => describe(author), onSome: (a) => `agent ${a.name}` })} for ${date}`,
      data: {
        date,
        author,
        done: done.length,
        planned: planned.length,
        blockers: blockers.length,
        ...(Option.isSome(agent) ? { agentId: agent.value.id } : {})
      }
    })
    return standup
  }).pipe(inTransaction(sql))

/** Daily standups of the lab's members and agents: one per author and day. */
export class Standups extends Effect.Service<Standups>()("Standups", {
  dependencies: [StandupsRepo.Default, Agents.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(StandupsRepo), agents: Agents })
    return {
      ...resourceReads(RESOURCE, deps.repo),
      create: (labId: LabId, input: Omit<CreateStandup, "labId">, actor: string) => create(deps, labId, input, actor)
    }
  })
}) {}
