import { Effect, Either, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps } from "../activity/ResourceService.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { transition } from "../common/StateMachine.js"
import type { LabId } from "../labs/LabId.js"
import {
  type CreateExperiment,
  ExperimentId,
  ExperimentMachine,
  type ExperimentRecord,
  type LogMetrics,
  type Template,
  type UpdateExperiment
} from "./Experiment.js"
import { type ExperimentFilter, ExperimentsRepo, type MetricPage } from "./ExperimentsRepo.js"
import { inTransaction, invalid, named } from "./Lookups.js"
import { validateParams } from "./ParamsSchema.js"
import { type Finish, Scheduler } from "./Scheduler.js"
import { TemplatesRepo } from "./TemplatesRepo.js"

interface Deps extends ResourceDeps<ExperimentsRepo> {
  readonly templates: TemplatesRepo
  readonly scheduler: Scheduler
  readonly references: References
}

const get = (deps: Deps, labId: LabId, id: string) => orNotFound("experiment", id)(deps.repo.find(labId, id))
const locked = (deps: Deps, labId: LabId, id: string) => orNotFound("experiment", id)(deps.repo.findForUpdate(labId, id))

const checkParams = (template: Option.Option<Template>, params: Readonly<Record<string, unknown>>) =>
  Option.match(template, {
    onNone: () => Effect.void,
    onSome: (t) =>
      Either.match(validateParams(t.paramsSchema, params), { onLeft: (m) => Effect.fail(invalid("params", m)), onRight: () => Effect.void })
  })

const checkProject = (deps: Deps, labId: LabId, projectId: string | null | undefined) =>
  projectId === null || projectId === undefined ? Effect.void : deps.references.require(labId, "projectId", "project", [projectId])

/** A draft of the input over its template's name, description and defaults. */
const draft = (labId: LabId, input: Omit<CreateExperiment, "labId">, template: Option.Option<Template>) =>
  Effect.gen(function* () {
    const name = input.name ?? Option.getOrUndefined(Option.map(template, (t) => t.name))
    if (name === undefined) return yield* invalid("name", "name is required (or give a templateId to take the template's name)")
    const params = { ...Option.match(template, { onNone: () => ({}), onSome: (t) => t.defaults }), ...input.params }
    yield* checkParams(template, params)
    const now = new Date()
    const experiment: ExperimentRecord = {
      id: ExperimentId.make(newId("exp")),
      labId,
      name,
      description: input.description ?? Option.match(template, { onNone: () => "", onSome: (t) => t.description }),
      hypothesis: input.hypothesis ?? "",
      params,
      status: "draft",
      statusMessage: null,
      templateId: input.templateId ?? null,
      queueId: null,
      podId: null,
      projectId: input.projectId ?? null,
      createdAt: now,
      updatedAt: now,
      queuedAt: null,
      startedAt: null,
      finishedAt: null
    }
    return experiment
  })

const create = (deps: Deps, labId: LabId, input: Omit<CreateExperiment, "labId">, actor: string) =>
  Effect.gen(function* () {
    const { templateId } = input
    const template =
      templateId === undefined ? Option.none<Template>() : Option.some(yield* named("templateId", "template", templateId)(deps.templates.find(labId, templateId)))
    const experiment = yield* draft(labId, input, template)
    yield* checkProject(deps, labId, input.projectId)
    yield* deps.repo.insert(experiment)
    yield* deps.activity.record({
      labId,
      kind: "experiment.created",
      ref: experiment.id,
      actor,
      message: `Created experiment ${experiment.name}`,
      data: { templateId: experiment.templateId, projectId: experiment.projectId }
    })
    return { ...experiment, cost: {} }
  }).pipe(inTransaction(deps))

const update = (deps: Deps, labId: LabId, id: string, input: Omit<UpdateExperiment, "labId">, actor: string) =>
  Effect.gen(function* () {
    yield* checkProject(deps, labId, input.projectId)
    const current = yield* locked(deps, labId, id)
    if (input.params !== undefined) {
      if (current.status !== "draft" && current.status !== "queued") {
        return yield* new StateConflict({
          resource: "experiment",
          id,
          problem: `experiment ${id} is ${current.status}: params are frozen once it runs (they change only while draft or queued)`
        })
      }
      const template = current.templateId === null ? Option.none<Template>() : yield* deps.templates.find(labId, current.templateId)
      yield* checkParams(template, input.params)
    }
    const { name, description, hypothesis, params, projectId } = input
    const change: Partial<ExperimentRecord> = { name, description, hypothesis, params, projectId }
    const fields = Object.entries(change).flatMap(([k, v]) => (v === undefined ? [] : [k]))
    if (fields.length === 0) return current
    yield* deps.repo.update(id, change)
    yield* deps.activity.record({
      labId,
      kind: "experiment.updated",
      ref: id,
      actor,
      message: `Updated ${fields.join(", ")} of experiment ${input.name ?? current.name}`,
      data: { fields }
    })
    return yield* get(deps, labId, id)
  }).pipe(inTransaction(deps))

/** cancel / complete / fail. Repeating the same action is a no-op; any other illegal move is 409. */
const finish = (deps: Deps, labId: LabId, id: string, to: Finish, reason: string | undefined, actor: string) =>
  Effect.gen(function* () {
    const current = yield* locked(deps, labId, id)
    if (current.status === to) return { experiment: current, freed: false }
    yield* transition(`experiment ${id}`, ExperimentMachine, current.status, to)
    yield* deps.scheduler.finishIn(current, to, reason ?? null, actor)
    return { experiment: yield* get(deps, labId, id), freed: current.status === "running" }
  }).pipe(
    inTransaction(deps),
    Effect.tap(({ freed }) => (freed ? deps.scheduler.wake : Effect.void)),
    Effect.map(({ experiment }) => experiment)
  )

const logMetrics = (deps: Deps, labId: LabId, id: string, points: LogMetrics["points"], actor: string) =>
  Effect.gen(function* () {
    const experiment = yield* locked(deps, labId, id)
    if (experiment.status !== "running") {
      return yield* new StateConflict({
        resource: "experiment",
        id,
        problem: `experiment ${id} is ${experiment.status}: metrics are logged while it runs`
      })
    }
    const now = new Date()
    const stored = yield* deps.repo.appendMetrics(
      labId,
      id,
      points.map((p) => ({ key: p.key, value: p.value, step: p.step ?? null, timestamp: p.timestamp ?? now }))
    )
    const keys = [...new Set(points.map((p) => p.key))]
    yield* deps.activity.record({
      labId,
      kind: "experiment.metrics_logged",
      ref: id,
      actor,
      message: `Logged ${points.length} metric point(s) of ${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", …" : ""} to ${experiment.name}`,
      data: { count: points.length, keys: keys.slice(0, 50) }
    })
    return stored
  }).pipe(inTransaction(deps))

/**
 * Experiments and their metrics: the business rules. Templates, queues and cost records are services of their own
 * (ExperimentTemplates.ts, ExperimentQueues.ts, ExperimentCosts.ts).
 */
export class Experiments extends Effect.Service<Experiments>()("Experiments", {
  dependencies: [ExperimentsRepo.Default, TemplatesRepo.Default, ActivityRepo.Default, Scheduler.Default, References.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({
      ...resourceDeps(ExperimentsRepo),
      templates: TemplatesRepo,
      scheduler: Scheduler,
      references: References
    })
    return {
      list: (labId: LabId, filter: ExperimentFilter) => deps.repo.list(labId, filter),
      get: (labId: LabId, id: ExperimentId) => get(deps, labId, id),
      create: (labId: LabId, input: Omit<CreateExperiment, "labId">, actor: string) => create(deps, labId, input, actor),
      update: (labId: LabId, id: ExperimentId, input: Omit<UpdateExperiment, "labId">, actor: string) =>
        update(deps, labId, id, input, actor),
      finish: (labId: LabId, id: ExperimentId, to: Finish, reason: string | undefined, actor: string) =>
        finish(deps, labId, id, to, reason, actor),
      logMetrics: (labId: LabId, id: ExperimentId, points: LogMetrics["points"], actor: string) =>
        logMetrics(deps, labId, id, points, actor),
      listMetrics: (labId: LabId, id: ExperimentId, key: string | undefined, page: MetricPage) =>
        Effect.zipRight(get(deps, labId, id), deps.repo.listMetrics(id, key, page))
    }
  })
}) {}
