import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { transition } from "../common/StateMachine.js"
import { Conflict } from "../http/Errors.js"
import {
  type CreateExperiment,
  ExperimentMachine,
  type ExperimentRecord,
  type LogMetrics,
  type Template,
  type UpdateExperiment
} from "./Experiment.js"
import { type ExperimentFilter, ExperimentsRepo } from "./ExperimentsRepo.js"
import { invalid, named, orNotFound } from "./Lookups.js"
import { validateParams } from "./ParamsSchema.js"
import { type Finish, Scheduler } from "./Scheduler.js"
import { TemplatesRepo } from "./TemplatesRepo.js"

/**
 * Experiments and their metrics: the business rules. Templates, queues and cost records are services of their own
 * (ExperimentTemplates.ts, ExperimentQueues.ts, ExperimentCosts.ts).
 */
export class Experiments extends Effect.Service<Experiments>()("Experiments", {
  dependencies: [
    ExperimentsRepo.Default,
    TemplatesRepo.Default,
    ActivityRepo.Default,
    Scheduler.Default,
    References.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ExperimentsRepo
    const templates = yield* TemplatesRepo
    const activity = yield* ActivityRepo
    const scheduler = yield* Scheduler
    const references = yield* References

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), orNotFound("experiment", id))
    const lockedExperiment = (labId: string, id: string) =>
      Effect.flatMap(repo.findForUpdate(labId, id), orNotFound("experiment", id))
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

    return {
      list: (labId: string, filter: ExperimentFilter) => repo.list(labId, filter),
      get,
      create,
      update,
      finish,
      logMetrics,
      listMetrics
    }
  })
}) {}
