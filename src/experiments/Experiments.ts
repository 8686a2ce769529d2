import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { transition } from "../common/StateMachine.js"
import { addTo, totalsList } from "../costs/Money.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import { Conflict, NotFound, ValidationError } from "../http/Errors.js"
import type { PageQuery } from "../http/Pagination.js"
import { type CostFilter, CostsRepo } from "./CostsRepo.js"
import {
  type CreateExperiment,
  type CreateExperimentCost,
  type CreateTemplate,
  type ExperimentCost,
  ExperimentMachine,
  type ExperimentRecord,
  type LogMetrics,
  type Template,
  type UpdateExperiment
} from "./Experiment.js"
import { type ExperimentFilter, ExperimentsRepo } from "./ExperimentsRepo.js"
import { checkSchema, validateParams } from "./ParamsSchema.js"
import { QueuesRepo } from "./QueuesRepo.js"
import { type Finish, Scheduler } from "./Scheduler.js"
import { TemplatesRepo } from "./TemplatesRepo.js"

const invalid = (message: string) => new ValidationError({ message })

/** Experiments, their templates, queues, metrics and cost records: the business rules. */
export class Experiments extends Effect.Service<Experiments>()("Experiments", {
  dependencies: [
    ExperimentsRepo.Default,
    TemplatesRepo.Default,
    QueuesRepo.Default,
    CostsRepo.Default,
    ActivityRepo.Default,
    Scheduler.Default,
    References.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ExperimentsRepo
    const templates = yield* TemplatesRepo
    const queues = yield* QueuesRepo
    const costs = yield* CostsRepo
    const activity = yield* ActivityRepo
    const scheduler = yield* Scheduler
    const references = yield* References

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const orNotFound =
      (what: string, id: string) =>
      <A>(found: Option.Option<A>): Effect.Effect<A, NotFound> =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(new NotFound({ message: `no ${what} ${id} in this lab` }))

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), orNotFound("experiment", id))
    const lockedExperiment = (labId: string, id: string) =>
      Effect.flatMap(repo.findForUpdate(labId, id), orNotFound("experiment", id))
    /** A resource a body names (templateId, queueId, experimentId): 422 naming the field when it is not in the lab. */
    const named =
      (field: string, what: string, id: string) =>
      <A>(found: Option.Option<A>): Effect.Effect<A, ValidationError> =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(invalid(`${field}: no ${what} ${id} in this lab`))

    const checkParams = (template: Option.Option<Template>, params: Readonly<Record<string, unknown>>) =>
      Option.match(template, {
        onNone: () => Effect.void,
        onSome: (t) => Either.match(validateParams(t.paramsSchema, params), { onLeft: (m) => Effect.fail(invalid(m)), onRight: () => Effect.void })
      })

    const checkProject = (labId: string, projectId: string | null | undefined) =>
      projectId === null || projectId === undefined ? Effect.void : references.require(labId, "projectId", "project", [projectId])

    // -----------------------------------------------------------------------
    // experiments

    const create = (labId: string, input: Omit<CreateExperiment, "labId">, actor: string) =>
      Effect.gen(function* () {
        const template =
          input.templateId === undefined
            ? Option.none<Template>()
            : Option.some(yield* Effect.flatMap(templates.find(labId, input.templateId), named("templateId", "template", input.templateId)))
        const name = input.name ?? Option.getOrUndefined(Option.map(template, (t) => t.name))
        if (name === undefined) return yield* invalid("name is required (or give a templateId to take the template's name)")
        const params = { ...Option.match(template, { onNone: () => ({}), onSome: (t) => t.defaults }), ...input.params }
        yield* checkParams(template, params)
        yield* checkProject(labId, input.projectId)
        const now = new Date()
        const experiment: ExperimentRecord = {
          id: newId("exp"),
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
        return yield* inTransaction(
          Effect.gen(function* () {
            yield* repo.insert(experiment)
            yield* activity.record({
              labId,
              kind: "experiment.created",
              ref: experiment.id,
              actor,
              message: `Created experiment ${name}`,
              data: { templateId: experiment.templateId, projectId: experiment.projectId }
            })
            return { ...experiment, cost: {} }
          })
        )
      })

    const update = (labId: string, id: string, input: Omit<UpdateExperiment, "labId">, actor: string) =>
      Effect.gen(function* () {
        yield* checkProject(labId, input.projectId)
        return yield* inTransaction(
          Effect.gen(function* () {
            const current = yield* lockedExperiment(labId, id)
            if (input.params !== undefined) {
              if (current.status !== "draft" && current.status !== "queued") {
                return yield* new Conflict({
                  message: `experiment ${id} is ${current.status}: params are frozen once it runs (they change only while draft or queued)`
                })
              }
              const template = current.templateId === null ? Option.none<Template>() : yield* templates.find(labId, current.templateId)
              yield* checkParams(template, input.params)
            }
            const change: Partial<ExperimentRecord> = {
              name: input.name,
              description: input.description,
              hypothesis: input.hypothesis,
              params: input.params,
              projectId: input.projectId
            }
            const fields = Object.entries(change).flatMap(([k, v]) => (v === undefined ? [] : [k]))
            if (fields.length === 0) return current
            yield* repo.update(id, change)
            yield* activity.record({
              labId,
              kind: "experiment.updated",
              ref: id,
              actor,
              message: `Updated ${fields.join(", ")} of experiment ${input.name ?? current.name}`,
              data: { fields }
            })
            return yield* get(labId, id)
          })
        )
      })

    /** cancel / complete / fail. Repeating the same action is a no-op; any other illegal move is 409. */
    const finish = (labId: string, id: string, to: Finish, reason: string | undefined, actor: string) =>
      Effect.gen(function* () {
        const { experiment, freed } = yield* inTransaction(
          Effect.gen(function* () {
            const current = yield* lockedExperiment(labId, id)
            if (current.status === to) return { experiment: current, freed: false }
            yield* transition(`experiment ${id}`, ExperimentMachine, current.status, to)
            yield* scheduler.finishIn(current, to, reason ?? null, actor)
            return { experiment: yield* get(labId, id), freed: current.status === "running" }
          })
        )
        if (freed) yield* scheduler.wake
        return experiment
      })

    // -----------------------------------------------------------------------
    // metrics

    const logMetrics = (labId: string, id: string, points: LogMetrics["points"], actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const experiment = yield* lockedExperiment(labId, id)
          if (experiment.status !== "running") {
            return yield* new Conflict({ message: `experiment ${id} is ${experiment.status}: metrics are logged while it runs` })
          }
          const now = new Date()
          const stored = yield* repo.appendMetrics(
            labId,
            id,
            points.map((p) => ({ key: p.key, value: p.value, step: p.step ?? null, timestamp: p.timestamp ?? now }))
          )
          const keys = [...new Set(points.map((p) => p.key))]
          yield* activity.record({
            labId,
            kind: "experiment.metrics_logged",
            ref: id,
            actor,
            message: `Logged ${points.length} metric point(s) of ${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", …" : ""} to ${experiment.name}`,
            data: { count: points.length, keys: keys.slice(0, 50) }
          })
          return stored
        })
      )

    const listMetrics = (
      labId: string,
      id: string,
      key: string | undefined,
      page: { readonly limit: number; readonly cursor: Option.Option<{ readonly seq: number }> }
    ) => Effect.zipRight(get(labId, id), repo.listMetrics(id, key, page))

    // -----------------------------------------------------------------------
    // templates

    const createTemplate = (labId: string, input: Omit<CreateTemplate, "labId">, actor: string) =>
      Effect.gen(function* () {
        const schema = checkSchema(input.paramsSchema)
        if (Either.isLeft(schema)) return yield* invalid(schema.left)
        const defaults = validateParams(input.paramsSchema, input.defaults)
        if (Either.isLeft(defaults)) {
          // `required` is what an experiment must end up with, not what defaults must hold
          const missingOnly = /is required by the template$/.test(defaults.left)
          if (!missingOnly) return yield* invalid(defaults.left.replace(/^params\./, "defaults."))
        }
        const now = new Date()
        const template: Template = { id: newId("tpl"), labId, ...input, createdAt: now, updatedAt: now }
        return yield* inTransaction(
          Effect.gen(function* () {
            yield* templates.insert(template)
            yield* activity.record({
              labId,
              kind: "experiment_template.created",
              ref: template.id,
              actor,
              message: `Created experiment template ${template.name}`,
              data: {}
            })
            return template
          })
        )
      })

    // -----------------------------------------------------------------------
    // queues

    const createQueue = (labId: string, name: string, actor: string) =>
      Effect.gen(function* () {
        const conflict = new Conflict({ message: `a queue named ${name} exists in this lab` })
        if (yield* queues.findByName(labId, name)) return yield* conflict
        const now = new Date()
        const id = newId("queue")
        yield* inTransaction(
          Effect.gen(function* () {
            yield* queues.insert({ id, labId, name, createdAt: now, updatedAt: now })
            yield* activity.record({ labId, kind: "experiment_queue.created", ref: id, actor, message: `Created queue ${name}`, data: {} })
          }).pipe(Effect.catchIf(isUniqueViolation, () => conflict))
        )
        return yield* Effect.flatMap(queues.find(labId, id), orNotFound("queue", id))
      })

    /** draft → queued in the queue; again in the same queue is a no-op. The scheduler starts it when a pod is free. */
    const enqueue = (labId: string, queueId: string, experimentId: string, actor: string) =>
      Effect.gen(function* () {
        const { experiment, queued } = yield* inTransaction(
          Effect.gen(function* () {
            const queue = yield* Effect.flatMap(queues.find(labId, queueId), named("queueId", "queue", queueId))
            const current = yield* Effect.flatMap(repo.findForUpdate(labId, experimentId), named("experimentId", "experiment", experimentId))
            if (current.status === "queued") {
              if (current.queueId === queueId) return { experiment: current, queued: false }
              return yield* new Conflict({ message: `experiment ${experimentId} is already queued in ${current.queueId}` })
            }
            yield* transition(`experiment ${experimentId}`, ExperimentMachine, current.status, "queued")
            yield* repo.update(experimentId, { status: "queued", queueId, queuedAt: new Date() }, ["draft"])
            yield* activity.record({
              labId,
              kind: "experiment.queued",
              ref: experimentId,
              actor,
              message: `Queued ${current.name} in ${queue.name}`,
              data: { queueId, position: queue.length + 1 }
            })
            return { experiment: yield* get(labId, experimentId), queued: true }
          })
        )
        if (queued) yield* scheduler.wake
        return experiment
      })

    // -----------------------------------------------------------------------
    // cost records

    const recordCost = (labId: string, input: Omit<CreateExperimentCost, "labId">, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const experiment = yield* Effect.flatMap(
            repo.findForUpdate(labId, input.experimentId),
            named("experimentId", "experiment", input.experimentId)
          )
          const now = new Date()
          const cost: ExperimentCost = {
            id: newId("cost"),
            labId,
            experimentId: input.experimentId,
            amount: input.amount,
            currency: input.currency,
            category: input.category,
            source: input.source,
            description: input.description,
            origin: "manual",
            incurredAt: input.incurredAt ?? now,
            createdAt: now
          }
          yield* costs.insert(cost)
          yield* activity.record({
            labId,
            kind: "experiment.cost_recorded",
            ref: experiment.id,
            actor,
            message: `Recorded ${cost.amount} ${cost.currency} of ${cost.category} (${cost.source}) for ${experiment.name}`,
            data: { costId: cost.id, amount: cost.amount, currency: cost.currency, category: cost.category, source: cost.source }
          })
          return cost
        })
      )

    const listCosts = (labId: string, filter: CostFilter & PageQuery) =>
      Effect.gen(function* () {
        if (filter.experimentId !== undefined) yield* get(labId, filter.experimentId)
        const [page, rows] = yield* Effect.all([costs.list(labId, filter), costs.totals(labId, filter)])
        const totals = new Map<string, { total: number; compute: number; api: number; storage: number; count: number }>()
        for (const row of rows) addTo(totals, row.currency, row.category, row.amount, row.count)
        return { page, totals: totalsList(totals) }
      })

    return {
      list: (labId: string, filter: ExperimentFilter) => repo.list(labId, filter),
      get,
      create,
      update,
      finish,
      logMetrics,
      listMetrics,
      listTemplates: (labId: string, page: PageQuery) => templates.list(labId, page),
      createTemplate,
      listQueues: (labId: string, page: PageQuery) => queues.list(labId, page),
      createQueue,
      enqueue,
      recordCost,
      listCosts
    }
  })
}) {}
