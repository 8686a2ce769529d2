import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { CostTotal } from "../costs/Money.js"
import { Envelope, ListEnvelope, ListMeta } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { createAs, createIn, getById, labGroup, listOf, pageOf, paged, updateById } from "../http/LabEndpoints.js"
import {
  CostListParams,
  CreateExperiment,
  CreateExperimentCost,
  CreateTemplate,
  Experiment,
  ExperimentAction,
  ExperimentCost,
  ExperimentId,
  ExperimentListParams,
  LogMetrics,
  MetricKey,
  MetricPoint,
  Queue,
  QueueRequest,
  Template,
  UpdateExperiment
} from "./Experiment.js"

const ExperimentPath = Schema.Struct({ id: ExperimentId })

/** A page of cost records; `meta.totals` sums every record the filters select, not only this page. */
export const CostPage = Schema.Struct({
  data: Schema.Array(ExperimentCost),
  meta: Schema.Struct({
    ...ListMeta.fields,
    totals: Schema.Array(CostTotal).annotations({ description: "per currency, by category, over all pages" })
  })
}).annotations({ identifier: "ExperimentCostPage" })

const action = <N extends string>(name: N, verb: string, summary: string) =>
  HttpApiEndpoint.post(name, `/experiments/:id/${verb}`)
    .setPath(ExperimentPath)
    .setPayload(ExperimentAction)
    .addSuccess(Envelope(Experiment))
    .addError(ConflictWire)
    .annotate(OpenApi.Summary, summary)

/**
 * Catalog: GET/POST /experiments, /experiments/templates, /experiments/queues,
 * /experiments/costs. Extensions: GET/PATCH /experiments/{id}, POST
 * /experiments/{id}/cancel|complete|fail, GET/POST /experiments/{id}/metrics.
 */
export class ExperimentsApi extends HttpApiGroup.make("experiments")
  .add(
    listOf("/experiments", paged(ExperimentListParams.fields), Experiment).annotate(
      OpenApi.Summary,
      "The lab's experiments, newest first"
    )
  )
  .add(
    createIn("/experiments", CreateExperiment, Experiment).annotate(
      OpenApi.Summary,
      "Create a draft experiment, from scratch or from a template (templateId)"
    )
  )
  // the static paths first in the document; the router prefers them over /experiments/{id} anyway
  .add(
    pageOf("listTemplates", "/experiments/templates", paged({ labId: LabRef }), Template).annotate(
      OpenApi.Summary,
      "The lab's experiment templates, newest first"
    )
  )
  .add(
    createAs("createTemplate", "/experiments/templates", CreateTemplate, Template).annotate(
      OpenApi.Summary,
      "Create a template: name, description, paramsSchema, defaults"
    )
  )
  .add(
    pageOf("listQueues", "/experiments/queues", paged({ labId: LabRef }), Queue).annotate(
      OpenApi.Summary,
      "The lab's queues with their length and waiting time, newest first"
    )
  )
  .add(
    HttpApiEndpoint.post("queue", "/experiments/queues")
      .setPayload(QueueRequest)
      .addSuccess(Envelope(Queue).annotations({ description: "{labId, name}: the queue was created" }), { status: 201 })
      .addSuccess(Envelope(Experiment).annotations({ description: "{labId, queueId, experimentId}: the experiment is queued" }), {
        status: 202
      })
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Create a queue ({labId, name}) or enqueue a draft experiment ({labId, queueId, experimentId})")
  )
  .add(
    HttpApiEndpoint.get("listCosts", "/experiments/costs")
      .setUrlParams(paged(CostListParams.fields))
      .addSuccess(CostPage)
      .annotate(OpenApi.Summary, "Cost records, newest first, with their totals in meta.totals")
  )
  .add(
    createAs("createCost", "/experiments/costs", CreateExperimentCost, ExperimentCost).annotate(
      OpenApi.Summary,
      "Record a cost of an experiment"
    )
  )
  .add(getById("/experiments/:id", ExperimentPath, Experiment).annotate(OpenApi.Summary, "One experiment (extension)"))
  .add(
    updateById("/experiments/:id", ExperimentPath, UpdateExperiment, Experiment)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Change name, description, hypothesis, projectId, or params until it runs (extension)")
  )
  .add(action("cancel", "cancel", "draft, queued or running → cancelled (extension)"))
  .add(action("complete", "complete", "running → completed (extension)"))
  .add(action("fail", "fail", "running → failed (extension)"))
  .add(
    HttpApiEndpoint.post("logMetrics", "/experiments/:id/metrics")
      .setPath(ExperimentPath)
      .setPayload(LogMetrics)
      .addSuccess(Envelope(Schema.Array(MetricPoint)), { status: 201 })
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Append metric points to a running experiment (extension)")
  )
  .add(
    HttpApiEndpoint.get("listMetrics", "/experiments/:id/metrics")
      .setPath(ExperimentPath)
      .setUrlParams(paged({ labId: LabRef, key: Schema.optional(MetricKey) }))
      .addSuccess(ListEnvelope(MetricPoint))
      .annotate(OpenApi.Summary, "Metric points in the order they were appended, optionally of one key (extension)")
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Experiments (draft → queued → running → completed | failed | cancelled), templates, FIFO queues run on the lab's pods, metrics and cost records."
  ) {}
