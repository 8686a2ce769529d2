import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { Conflict, NotFound } from "../http/Errors.js"
import { References } from "../common/References.js"
import { type CreateSurvey, type Survey, SurveyLifecycle, type SurveyStatus, type UpdateSurvey } from "./Survey.js"
import { type SurveyFilter, SurveysRepo } from "./SurveysRepo.js"

/** The activity kind of a status change. */
const VERB: Record<SurveyStatus, string> = { draft: "drafted", in_progress: "started", completed: "completed", archived: "archived" }

const FIELDS = ["topic", "question", "findings", "linkedPaperIds", "tags", "status"] as const

const unique = (ids: ReadonlyArray<string>) => [...new Set(ids)]

/** Literature surveys: draft → in_progress → completed, archived from any state (final, read-only). */
export class Surveys extends Effect.Service<Surveys>()("Surveys", {
  dependencies: [SurveysRepo.Default, References.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* SurveysRepo
    const references = yield* References
    const activity = yield* ActivityRepo

    const notFound = (id: string) => new NotFound({ message: `no survey ${id} in this lab` })
    const found = (id: string) =>
      (o: Option.Option<Survey>): Effect.Effect<Survey, NotFound> => (Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(notFound(id)))

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), found(id))

    /** 422 naming the linked papers that are not in the lab. */
    const checkPapers = (labId: string, ids: ReadonlyArray<string>) => references.require(labId, "linkedPaperIds", "paper", ids)

    const create = (labId: string, input: Omit<CreateSurvey, "labId">, actor: string) =>
      Effect.gen(function* () {
        const linkedPaperIds = unique(input.linkedPaperIds)
        yield* checkPapers(labId, linkedPaperIds)
        const now = new Date()
        const survey: Survey = { id: newId("srv"), labId, ...input, linkedPaperIds, status: "draft", createdAt: now, updatedAt: now }
        yield* repo.insert(survey)
        yield* activity.record({
          labId,
          kind: "survey.created",
          ref: survey.id,
          actor,
          message: `Started a survey draft: ${survey.topic}`,
          data: { topic: survey.topic, linkedPaperIds }
        })
        return survey
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const update = (labId: string, id: string, patch: Omit<UpdateSurvey, "labId">, actor: string) =>
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), found(id))
        if (current.status === "archived") {
          return yield* new Conflict({ message: `survey ${id} is archived, a final state: it cannot be changed` })
        }
        const status = patch.status ?? current.status
        if (status !== current.status) yield* transition(`survey ${id}`, SurveyLifecycle, current.status, status)
        const linkedPaperIds = patch.linkedPaperIds === undefined ? current.linkedPaperIds : unique(patch.linkedPaperIds)
        if (patch.linkedPaperIds !== undefined) {
          yield* checkPapers(labId, linkedPaperIds.filter((p) => !current.linkedPaperIds.includes(p)))
        }
        const next: Survey = {
          ...current,
          topic: patch.topic ?? current.topic,
          question: patch.question ?? current.question,
          findings: patch.findings ?? current.findings,
          tags: patch.tags ?? current.tags,
          linkedPaperIds,
          status
        }
        const changed = FIELDS.filter((f) => JSON.stringify(next[f]) !== JSON.stringify(current[f]))
        if (changed.length === 0) return current
        const updated: Survey = { ...next, updatedAt: new Date() }
        yield* repo.update(updated)
        const moved = status !== current.status
        yield* activity.record({
          labId,
          kind: moved ? `survey.${VERB[status]}` : "survey.updated",
          ref: id,
          actor,
          message: moved ? `Survey ${updated.topic}: ${current.status} → ${status}` : `Updated survey ${updated.topic} (${changed.join(", ")})`,
          data: { changed, ...(moved ? { from: current.status, to: status } : {}) }
        })
        return updated
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const remove = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const deleted = yield* Effect.flatMap(repo.delete(labId, id), found(id))
        yield* activity.record({
          labId,
          kind: "survey.deleted",
          ref: id,
          actor,
          message: `Deleted survey ${deleted.topic}`,
          data: { topic: deleted.topic, status: deleted.status }
        })
        return deleted
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list: (labId: string, filter: SurveyFilter) => repo.list(labId, filter), get, create, update, remove }
  })
}) {}
