import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { Agents } from "../agents/Agents.js"
import { newId } from "../common/Ids.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import { Conflict, NotFound, ValidationError } from "../http/Errors.js"
import type { Author, CreateStandup, Standup } from "./Standup.js"
import { type StandupFilter, StandupsRepo } from "./StandupsRepo.js"

const DAY_MILLIS = 86_400_000
const today = (now: Date) => now.toISOString().slice(0, 10)

const describe = (author: Author) => `${author.kind} ${author.id}`

/** Daily standups of the lab's members and agents: one per author and day. */
export class Standups extends Effect.Service<Standups>()("Standups", {
  dependencies: [StandupsRepo.Default, Agents.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* StandupsRepo
    const agents = yield* Agents
    const activity = yield* ActivityRepo

    const get = (labId: string, id: string) =>
      Effect.flatMap(
        repo.find(labId, id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `no standup ${id} in this lab` })),
          onSome: Effect.succeed
        })
      )

    const duplicate = (author: Author, date: string, existing?: string) =>
      new Conflict({
        message: `${describe(author)} has a standup for ${date} already${existing ? `: ${existing}` : ""}; one per author and day`
      })

    const create = (labId: string, input: Omit<CreateStandup, "labId">, actor: string) =>
      Effect.gen(function* () {
        const now = new Date()
        const date = input.date ?? today(now)
        if (date > today(new Date(now.getTime() + DAY_MILLIS))) {
          return yield* new ValidationError({ message: `date: ${date} is more than a day ahead` })
        }
        if (input.done.length + input.planned.length + input.blockers.length === 0) {
          return yield* new ValidationError({ message: "done, planned, blockers: a standup needs at least one line" })
        }
        const author: Author = input.author ?? { kind: "member", id: actor }
        const agent = author.kind === "agent" ? Option.some(yield* agents.requireAgent(labId, author.id, "author.id")) : Option.none()
        const existing = yield* repo.findByAuthor(labId, author, date)
        if (Option.isSome(existing)) return yield* duplicate(author, date, existing.value.id)
        const standup: Standup = {
          id: newId("std"),
          labId,
          date,
          author,
          done: input.done,
          planned: input.planned,
          blockers: input.blockers,
          createdAt: now
        }
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
            done: standup.done.length,
            planned: standup.planned.length,
            blockers: standup.blockers.length,
            ...(Option.isSome(agent) ? { agentId: agent.value.id } : {})
          }
        })
        return standup
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list: (labId: string, filter: StandupFilter) => repo.list(labId, filter), get, create }
  })
}) {}
