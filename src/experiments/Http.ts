import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { Envelope, ok, okPage, respondWith } from "../http/Envelope.js"
import { ValidationError } from "../http/Errors.js"
import { created, listed, writing } from "../http/LabHandlers.js"
import { type LabScope, LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { pageQuery, pageQueryWith } from "../db/Paging.js"
import { Experiment, type ExperimentId, Queue, type QueueRequest } from "./Experiment.js"
import { ExperimentCosts } from "./ExperimentCosts.js"
import { ExperimentQueues } from "./ExperimentQueues.js"
import { Experiments } from "./Experiments.js"
import { MetricCursor } from "./ExperimentsRepo.js"
import { ExperimentTemplates } from "./ExperimentTemplates.js"
import type { Finish } from "./Scheduler.js"

const decodeMetricCursor = Schema.decodeUnknownEither(MetricCursor)
const encodeMetricCursor = Schema.encodeSync(MetricCursor)

const QueueCreated = Envelope(Queue)
const ExperimentQueued = Envelope(Experiment)

/** POST /experiments/queues: {name} creates a queue (201), {queueId, experimentId} enqueues (202). */
const queueOrEnqueue = (queues: ExperimentQueues, scope: LabScope, request: Omit<QueueRequest, "labId">) =>
  Effect.gen(function* () {
    const { name, queueId, experimentId } = request
    if (name !== undefined) {
      if (queueId !== undefined || experimentId !== undefined) {
        return yield* new ValidationError({
          message: "name: give either name (to create a queue) or queueId and experimentId (to enqueue), not both"
        })
      }
      const queue = yield* queues.create(scope.labId, name, scope.actor)
      return yield* respondWith(QueueCreated, yield* ok(queue), 201)
    }
    if (queueId === undefined) return yield* new ValidationError({ message: "queueId is required to enqueue (or give name to create a queue)" })
    if (experimentId === undefined) return yield* new ValidationError({ message: "experimentId is required to enqueue" })
    const experiment = yield* queues.enqueue(scope.labId, queueId, experimentId, scope.actor)
    return yield* respondWith(ExperimentQueued, yield* ok(experiment), 202)
  })

/** Metric points, in the order they were appended: their cursor is a position, not a creation time. */
const metricsPage = (
  experiments: Experiments,
  scope: LabScope,
  id: ExperimentId,
  key: string | undefined,
  page: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
) =>
  Effect.gen(function* () {
    const query = yield* pageQueryWith(decodeMetricCursor, page)
    const listing = yield* experiments.listMetrics(scope.labId, id, key, query)
    return yield* okPage({ items: listing.items, nextCursor: Option.getOrNull(Option.map(listing.next, encodeMetricCursor)) })
  })

export const ExperimentsHttp = HttpApiBuilder.group(Api, "experiments", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const experiments = yield* Experiments
    const templates = yield* ExperimentTemplates
    const queues = yield* ExperimentQueues
    const costs = yield* ExperimentCosts
    const finish =
      (to: Finish) =>
      ({ path, payload }: { readonly path: { readonly id: ExperimentId }; readonly payload: { readonly labId: string; readonly reason?: string | undefined } }) =>
        writing(lab, payload.labId, (scope) => experiments.finish(scope.labId, path.id, to, payload.reason, scope.actor))

    return labRoutes(handlers, lab, experiments)
      .handle("cancel", finish("cancelled"))
      .handle("complete", finish("completed"))
      .handle("fail", finish("failed"))
      .handle("logMetrics", ({ path, payload }) =>
        writing(lab, payload.labId, (scope) => experiments.logMetrics(scope.labId, path.id, payload.points, scope.actor))
      )
      .handle("listMetrics", ({ path, urlParams: { labId, key, ...page } }) =>
        lab.read(labId, (scope) => metricsPage(experiments, scope, path.id, key, page))
      )
      .handle("listTemplates", ({ urlParams }) => listed(lab, urlParams, templates.list)
      )
      .handle("createTemplate", ({ payload }) => created(lab, payload, templates.create))
      .handle("listQueues", ({ urlParams }) => listed(lab, urlParams, queues.list)
      )
      .handle("queue", ({ payload: { labId, ...request } }) => lab.write(labId, (scope) => queueOrEnqueue(queues, scope, request)))
      .handle("listCosts", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.gen(function* () {
          const { page: records, totals } = yield* lab.read(labId, (scope) =>
            Effect.flatMap(pageQuery({ limit, cursor }), (page) => costs.list(scope.labId, { ...page, ...filter }))
          )
          const body = yield* okPage(records)
          return { ...body, meta: { ...body.meta, totals } }
        })
      )
      .handle("createCost", ({ payload }) => created(lab, payload, costs.record))
  })
)
