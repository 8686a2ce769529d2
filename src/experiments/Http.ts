import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { Envelope, ok, okPage, respondWith } from "../http/Envelope.js"
import { ValidationError } from "../http/Errors.js"
import { pageQuery, pageQueryWith } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Experiment, Queue } from "./Experiment.js"
import { ExperimentCosts } from "./ExperimentCosts.js"
import { ExperimentQueues } from "./ExperimentQueues.js"
import { Experiments } from "./Experiments.js"
import { ExperimentTemplates } from "./ExperimentTemplates.js"
import { MetricCursor } from "./ExperimentsRepo.js"

const decodeMetricCursor = Schema.decodeUnknownEither(MetricCursor)
const encodeMetricCursor = Schema.encodeSync(MetricCursor)

const QueueCreated = Envelope(Queue)
const ExperimentQueued = Envelope(Experiment)

export const ExperimentsHttp = HttpApiBuilder.group(Api, "experiments", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const experiments = yield* Experiments
    const templates = yield* ExperimentTemplates
    const queues = yield* ExperimentQueues
    const costs = yield* ExperimentCosts
    const actor = Effect.map(CurrentPrincipal, (p) => p.id)
    const reading = (labId: string) => labs.access(labId, "read")
    const writing = (labId: string) => Effect.all([labs.access(labId, "write"), actor])

    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.all([reading(labId), pageQuery({ limit, cursor })]).pipe(
          Effect.flatMap(([lab, page]) => experiments.list(lab.id, { ...page, ...filter })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        writing(labId).pipe(
          Effect.flatMap(([lab, actor]) => experiments.create(lab.id, input, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("get", ({ path, urlParams }) =>
        reading(urlParams.labId).pipe(
          Effect.flatMap((lab) => experiments.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...input } }) =>
        writing(labId).pipe(
          Effect.flatMap(([lab, actor]) => experiments.update(lab.id, path.id, input, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("cancel", ({ path, payload }) =>
        writing(payload.labId).pipe(
          Effect.flatMap(([lab, actor]) => experiments.finish(lab.id, path.id, "cancelled", payload.reason, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("complete", ({ path, payload }) =>
        writing(payload.labId).pipe(
          Effect.flatMap(([lab, actor]) => experiments.finish(lab.id, path.id, "completed", payload.reason, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("fail", ({ path, payload }) =>
        writing(payload.labId).pipe(
          Effect.flatMap(([lab, actor]) => experiments.finish(lab.id, path.id, "failed", payload.reason, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("logMetrics", ({ path, payload }) =>
        writing(payload.labId).pipe(
          Effect.flatMap(([lab, actor]) => experiments.logMetrics(lab.id, path.id, payload.points, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("listMetrics", ({ path, urlParams: { labId, key, ...page } }) =>
        Effect.gen(function* () {
          const lab = yield* reading(labId)
          const query = yield* pageQueryWith(decodeMetricCursor, page)
          const listing = yield* experiments.listMetrics(lab.id, path.id, key, query)
          return yield* okPage({
            items: listing.items,
            nextCursor: Option.getOrNull(Option.map(listing.next, encodeMetricCursor))
          })
        })
      )
      .handle("listTemplates", ({ urlParams: { labId, ...page } }) =>
        Effect.all([reading(labId), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) => templates.list(lab.id, page)),
          Effect.flatMap(okPage)
        )
      )
      .handle("createTemplate", ({ payload: { labId, ...input } }) =>
        writing(labId).pipe(
          Effect.flatMap(([lab, actor]) => templates.create(lab.id, input, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("listQueues", ({ urlParams: { labId, ...page } }) =>
        Effect.all([reading(labId), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) => queues.list(lab.id, page)),
          Effect.flatMap(okPage)
        )
      )
      .handle("queue", ({ payload: { labId, name, queueId, experimentId } }) =>
        Effect.gen(function* () {
          const [lab, who] = yield* writing(labId)
          if (name !== undefined) {
            if (queueId !== undefined || experimentId !== undefined) {
              return yield* new ValidationError({
                message: "name: give either name (to create a queue) or queueId and experimentId (to enqueue), not both"
              })
            }
            const queue = yield* queues.create(lab.id, name, who)
            return yield* respondWith(QueueCreated, yield* ok(queue), 201)
          }
          if (queueId === undefined) return yield* new ValidationError({ message: "queueId is required to enqueue (or give name to create a queue)" })
          if (experimentId === undefined) return yield* new ValidationError({ message: "experimentId is required to enqueue" })
          const experiment = yield* queues.enqueue(lab.id, queueId, experimentId, who)
          return yield* respondWith(ExperimentQueued, yield* ok(experiment), 202)
        })
      )
      .handle("listCosts", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.gen(function* () {
          const [lab, page] = yield* Effect.all([reading(labId), pageQuery({ limit, cursor })])
          const { page: records, totals } = yield* costs.list(lab.id, { ...page, ...filter })
          const body = yield* okPage(records)
          return { ...body, meta: { ...body.meta, totals } }
        })
      )
      .handle("createCost", ({ payload: { labId, ...input } }) =>
        writing(labId).pipe(
          Effect.flatMap(([lab, actor]) => costs.record(lab.id, input, actor)),
          Effect.flatMap(ok)
        )
      )
  })
)

