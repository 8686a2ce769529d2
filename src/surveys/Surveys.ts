import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps, resourceReads } from "../activity/ResourceService.js"
import { applyPatch, insertLogged, removeLogged, storeChange, type LifecycleLog } from "../activity/Changes.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { transition } from "../common/StateMachine.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateSurvey, type Survey, SurveyId, SurveyLifecycle, type SurveyStatus, type UpdateSurvey } from "./Survey.js"
import { SurveysRepo } from "./SurveysRepo.js"
import { inTransaction } from "../db/Transaction.js"

/** How status changes are logged. */
const LOG: LifecycleLog<SurveyStatus> = {
  kind: "survey",
  label: "Survey",
  verbs: { draft: "drafted", in_progress: "started", completed: "completed", archived: "archived" }
}

const FIELDS = ["topic", "question", "findings", "linkedPaperIds", "tags", "status"] as const

const RESOURCE = "survey"

const unique = (ids: ReadonlyArray<string>) => [...new Set(ids)]

interface Deps extends ResourceDeps<SurveysRepo> {
  readonly references: References
}

/** 422 naming the linked papers that are not in the lab. */
const checkPapers = (references: References, labId: LabId, ids: ReadonlyArray<string>) =>
  references.require(labId, "linkedPaperIds", "paper", ids)

const create = ({ sql, repo, references, activity }: Deps, labId: LabId, input: Omit<CreateSurvey, "labId">, actor: string) =>
  Effect.gen(function* () {
    const linkedPaperIds = unique(input.linkedPaperIds)
    yield* checkPapers(references, labId, linkedPaperIds)
    const now = new Date()
    const id = SurveyId.make(newId("srv"))
    const survey: Survey = { id, labId, ...input, linkedPaperIds, status: "draft", createdAt: now, updatedAt: now }
    yield* insertLogged(activity, repo.insert, survey, actor, {
      kind: "survey.created",
      message: `Started a survey draft: ${survey.topic}`,
      data: { topic: survey.topic, linkedPaperIds }
    })
    return survey
  }).pipe(inTransaction(sql))

/** The survey as the patch leaves it, once its lifecycle and the linked papers allow it. */
const patched = (references: References, labId: LabId, current: Survey, patch: Omit<UpdateSurvey, "labId">) =>
  Effect.gen(function* () {
    const id = current.id
    if (current.status === "archived") {
      return yield* new StateConflict({ resource: RESOURCE, id, problem: `survey ${id} is archived, a final state: it cannot be changed` })
    }
    const status = patch.status ?? current.status
    if (status !== current.status) yield* transition(`survey ${id}`, SurveyLifecycle, current.status, status)
    const linkedPaperIds = patch.linkedPaperIds === undefined ? current.linkedPaperIds : unique(patch.linkedPaperIds)
    if (patch.linkedPaperIds !== undefined) {
      yield* checkPapers(references, labId, linkedPaperIds.filter((p) => !current.linkedPaperIds.includes(p)))
    }
    const next: Survey = { ...applyPatch(current, patch, ["topic", "question", "findings", "tags"]), linkedPaperIds, status }
    return next
  })

const update = (deps: Deps, labId: LabId, id: SurveyId, patch: Omit<UpdateSurvey, "labId">, actor: string) =>
  Effect.gen(function* () {
    const current = yield* orNotFound(RESOURCE, id)(deps.repo.findForUpdate(labId, id))
    const next = yield* patched(deps.references, labId, current, patch)
    return yield* storeChange(
      {
        activity: deps.activity,
        target: { labId, id, actor },
        log: LOG,
        fields: FIELDS,
        name: (survey) => survey.topic,
        store: deps.repo.update
      },
      current,
      next
    )
  }).pipe(inTransaction(deps.sql))

const remove = (deps: Deps, labId: LabId, id: SurveyId, actor: string) =>
  removeLogged(deps, { labId, resource: RESOURCE, id, actor }, deps.repo.remove(labId, id), (deleted) => ({
    kind: "survey.deleted",
    message: `Deleted survey ${deleted.topic}`,
    data: { topic: deleted.topic, status: deleted.status }
  }))

/** Literature surveys: draft → in_progress → completed, archived from any state (final, read-only). */
export class Surveys extends Effect.Service<Surveys>()("Surveys", {
  dependencies: [SurveysRepo.Default, References.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(SurveysRepo), references: References })
    return {
      ...resourceReads(RESOURCE, deps.repo),
      create: (labId: LabId, input: Omit<CreateSurvey, "labId">, actor: string) => create(deps, labId, input, actor),
      update: (labId: LabId, id: SurveyId, patch: Omit<UpdateSurvey, "labId">, actor: string) =>
        update(deps, labId, id, patch, actor),
      remove: (labId: LabId, id: SurveyId, actor: string) => remove(deps, labId, id, actor)
    }
  })
}) {}
