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

const action = <N extends string>(name: N, verb: string, summary: string, description: string) =>
  HttpApiEndpoint.post(name, `/experiments/:id/${verb}`)
    .setPath(ExperimentPath)
    .setPayload(ExperimentAction)
    .addSuccess(Envelope(Experiment))
    .addError(ConflictWire)
    .annotateContext(OpenApi.annotations({ summary, description }))

/**
 * Catalog: GET/POST /experiments, /experiments/templates, /experiments/queues,
 * /experiments/costs. Extensions: GET/PATCH /experiments/{id}, POST
 * /experiments/{id}/cancel|complete|fail, GET/POST /experiments/{id}/metrics.
 */
export class ExperimentsApi extends HttpApiGroup.make("experiments")
  .add(
    listOf("/experiments", paged(ExperimentListParams.fields), Experiment).annotateContext(
      OpenApi.annotations({
        summary: "List experiments",
        description:
          "The lab's experiments, newest first, filtered by `status`, `queueId`, `podId`, `templateId`, `projectId` and creation time. What waits in a queue: `queueId=…&status=queued`."
      })
    )
  )
  .add(
    createIn("/experiments", CreateExperiment, Experiment).annotateContext(
      OpenApi.annotations({
        summary: "Create an experiment",
        description:
          "Creates a `draft` experiment, from scratch or from a template (`templateId`): the template's name and description unless given, and its defaults with `params` merged over them, checked against its `paramsSchema` (422 naming the param). Run it by enqueueing it with POST /api/v1/experiments/queues."
      })
    )
  )
  // the static paths first in the document; the router prefers them over /experiments/{id} anyway
  .add(
    pageOf("listTemplates", "/experiments/templates", paged({ labId: LabRef }), Template).annotateContext(
      OpenApi.annotations({
        summary: "List experiment templates",
        description:
          "The lab's experiment templates, newest first."
      })
    )
  )
  .add(
    createAs("createTemplate", "/experiments/templates", CreateTemplate, Template).annotateContext(
      OpenApi.annotations({
        summary: "Create an experiment template",
        description:
          "Creates a reusable template: name, description, a `paramsSchema` (a JSON Schema subset the service enforces on experiments made from it) and `defaults` for their params."
      })
    )
  )
  .add(
    pageOf("listQueues", "/experiments/queues", paged({ labId: LabRef }), Queue).annotateContext(
      OpenApi.annotations({
        summary: "List experiment queues",
        description:
          "The lab's queues, newest first, each with its length, running experiments, the waiting time of its oldest queued experiment and the one that starts next."
      })
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a queue or enqueue an experiment",
          description:
            "`{labId, name}` creates a FIFO queue (201; 409 when the name is taken). `{labId, queueId, experimentId}` enqueues a draft experiment (202 with it `queued`; the same again is a no-op, another queue or a non-draft is 409). The scheduler starts queued experiments, first queued first, on the lab's running pods that are free."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("listCosts", "/experiments/costs")
      .setUrlParams(paged(CostListParams.fields))
      .addSuccess(CostPage)
      .annotateContext(
        OpenApi.annotations({
          summary: "List experiment cost records",
          description:
            "Cost records, newest first, filtered by `experimentId`, `category` and `incurredAt`; `meta.totals` sums every record the filters select, over all pages, per currency. For the lab's whole spend by day, pods included, use GET /api/v1/costs."
        })
      )
  )
  .add(
    createAs("createCost", "/experiments/costs", CreateExperimentCost, ExperimentCost).annotateContext(
      OpenApi.annotations({
        summary: "Record an experiment cost",
        description:
          "Records money an experiment cost outside its pod (an API bill, storage), with amount, currency, category and source. Pod runtime is recorded by the service itself when a run finishes."
      })
    )
  )
  .add(
    getById("/experiments/:id", ExperimentPath, Experiment).annotateContext(
      OpenApi.annotations({
        summary: "Get an experiment",
        description:
          "Extension. One experiment by id: status, params, queue, pod and timings."
      })
    )
  )
  .add(
    updateById("/experiments/:id", ExperimentPath, UpdateExperiment, Experiment)
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Update an experiment",
          description:
            "Extension. Changes name, description, hypothesis or project at any time, and `params` only while draft or queued (409 once it runs; checked against its template's schema)."
        })
      )
  )
  .add(
    action(
      "cancel",
      "cancel",
      "Cancel an experiment",
      "Extension. draft, queued or running → cancelled (final), with an optional `reason`. Cancelling a cancelled experiment is a no-op; a completed or failed one is 409."
    )
  )
  .add(
    action(
      "complete",
      "complete",
      "Mark an experiment completed",
      "Extension. running → completed (final), with an optional `reason`; the service records its pod runtime as a cost. 409 unless it is running (or completed already: a no-op)."
    )
  )
  .add(
    action(
      "fail",
      "fail",
      "Mark an experiment failed",
      "Extension. running → failed (final), with an optional `reason`; the service records its pod runtime as a cost. 409 unless it is running (or failed already: a no-op)."
    )
  )
  .add(
    HttpApiEndpoint.post("logMetrics", "/experiments/:id/metrics")
      .setPath(ExperimentPath)
      .setPayload(LogMetrics)
      .addSuccess(Envelope(Schema.Array(MetricPoint)), { status: 201 })
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Log experiment metrics",
          description:
            "Extension. Appends 1–1,000 metric points (`key`, `value`, optional `step` and `timestamp`) to a running experiment (409 otherwise) and answers the stored points."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("listMetrics", "/experiments/:id/metrics")
      .setPath(ExperimentPath)
      .setUrlParams(paged({ labId: LabRef, key: Schema.optional(MetricKey) }))
      .addSuccess(ListEnvelope(MetricPoint))
      .annotateContext(
        OpenApi.annotations({
          summary: "List experiment metrics",
          description:
            "Extension. The experiment's metric points in the order they were appended (the order for plotting), optionally of one `key`."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Experiments (draft → queued → running → completed | failed | cancelled), their templates, the FIFO queues the scheduler runs on the lab's pods, metrics and cost records."
  ) {}
