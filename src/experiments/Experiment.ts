import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Text, Timestamp } from "../common/Schemas.js"
import type { Transitions } from "../common/StateMachine.js"
import { Amount, ByCurrency, CostCategory, Currency } from "../costs/Money.js"

// ---------------------------------------------------------------------------
// shared pieces

/** A resource id in a path or a body: bounded, so a huge value is a 422, not a query. */
export const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))

/** Bytes of JSON a params (or defaults, or schema) object may take. */
export const MAX_JSON_BYTES = 64 * 1024

/** A JSON object of bounded size: experiment params, template defaults and schemas. */
export const JsonObject = (what: string) =>
  Schema.Record({ key: Schema.String.pipe(Schema.maxLength(200)), value: Schema.Unknown }).pipe(
    Schema.filter((value) =>
      Buffer.byteLength(JSON.stringify(value), "utf8") <= MAX_JSON_BYTES
        ? undefined
        : `${what} must be at most ${MAX_JSON_BYTES} bytes of JSON`
    ),
    Schema.annotations({ description: `a JSON object (at most ${MAX_JSON_BYTES} bytes)` })
  )

export const Params = JsonObject("params")

export const ExperimentId = resourceId("ExperimentId", "exp")
export type ExperimentId = typeof ExperimentId.Type

export const TemplateId = resourceId("TemplateId", "tpl")
export type TemplateId = typeof TemplateId.Type

export const QueueId = resourceId("QueueId", "queue")
export type QueueId = typeof QueueId.Type

export const CostId = resourceId("CostId", "cost")
export type CostId = typeof CostId.Type

// ---------------------------------------------------------------------------
// experiments

export const ExperimentStatus = Schema.Literal("draft", "queued", "running", "completed", "failed", "cancelled").annotations({
  description: "draft → queued → running → completed | failed | cancelled; draft and queued may be cancelled"
})
export type ExperimentStatus = typeof ExperimentStatus.Type

export const ExperimentMachine: Transitions<ExperimentStatus> = {
  draft: ["queued", "cancelled"],
  queued: ["running", "cancelled"],
  running: ["completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: []
}

export const FINISHED: ReadonlyArray<ExperimentStatus> = ["completed", "failed", "cancelled"]

export const Experiment = Schema.Struct({
  id: ExperimentId,
  labId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  hypothesis: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "free JSON; frozen once the experiment runs"
  }),
  status: ExperimentStatus,
  statusMessage: Schema.NullOr(Schema.String).annotations({
    description: "why it reached its status: the reason given to cancel/complete/fail, or what the service saw (its pod stopped)"
  }),
  templateId: Schema.NullOr(Schema.String),
  queueId: Schema.NullOr(Schema.String),
  podId: Schema.NullOr(Schema.String).annotations({ description: "the pod it ran on, set when the scheduler starts it" }),
  projectId: Schema.NullOr(Schema.String),
  cost: ByCurrency.annotations({ description: "the sum of its cost records, per currency" }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  queuedAt: Schema.NullOr(Timestamp),
  startedAt: Schema.NullOr(Timestamp),
  finishedAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Experiment" })
export type Experiment = typeof Experiment.Type

/** The stored columns (cost is computed). */
export type ExperimentRecord = Omit<Experiment, "cost">

export const CreateExperiment = Body({
  labId: LabRef,
  name: Schema.optional(Name(200)).annotations({ description: "required unless templateId is given" }),
  description: Schema.optional(Text(20_000)),
  hypothesis: Schema.optional(Text(20_000)),
  params: Schema.optional(Params).annotations({ description: "merged over the template's defaults" }),
  templateId: Schema.optional(Id),
  projectId: Schema.optional(Schema.NullOr(Id))
}).annotations({ identifier: "CreateExperiment" })
export type CreateExperiment = typeof CreateExperiment.Type

export const UpdateExperiment = Body({
  labId: LabRef,
  name: Schema.optional(Name(200)),
  description: Schema.optional(Text(20_000)),
  hypothesis: Schema.optional(Text(20_000)),
  params: Schema.optional(Params).annotations({ description: "replaces params; 409 once the experiment runs" }),
  projectId: Schema.optional(Schema.NullOr(Id))
}).annotations({ identifier: "UpdateExperiment" })
export type UpdateExperiment = typeof UpdateExperiment.Type

export const ExperimentAction = Body({
  labId: LabRef,
  reason: Schema.optional(Text(2_000)).annotations({ description: "kept as statusMessage" })
}).annotations({ identifier: "ExperimentAction" })

export const ExperimentListParams = Schema.Struct({
  labId: LabRef,
  status: Schema.optional(ExperimentStatus),
  queueId: Schema.optional(Id),
  podId: Schema.optional(Id),
  templateId: Schema.optional(Id),
  projectId: Schema.optional(Id),
  ...DateRange
})

// ---------------------------------------------------------------------------
// metrics

export const MetricKey = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_\-./: ]{1,250}$/),
  Schema.annotations({
    description: "1-250 letters, digits, spaces and _ - . / :",
    message: () => "must be 1-250 letters, digits, spaces or _ - . / :"
  })
)

export const MetricPointInput = Body({
  key: MetricKey,
  value: Schema.Number.pipe(Schema.finite()),
  step: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(0, Number.MAX_SAFE_INTEGER))),
  timestamp: Schema.optional(Timestamp).annotations({ description: "when it was measured; default now" })
})

export const MAX_POINTS = 1_000

export const LogMetrics = Body({
  labId: LabRef,
  points: Schema.Array(MetricPointInput).pipe(Schema.minItems(1), Schema.maxItems(MAX_POINTS))
}).annotations({ identifier: "LogMetrics" })
export type LogMetrics = typeof LogMetrics.Type

export const MetricPoint = Schema.Struct({
  experimentId: Schema.String,
  key: Schema.String,
  value: Schema.Number,
  step: Schema.NullOr(Schema.Number),
  timestamp: Timestamp,
  createdAt: Timestamp
}).annotations({ identifier: "MetricPoint" })
export type MetricPoint = typeof MetricPoint.Type

// ---------------------------------------------------------------------------
// templates

export const Template = LabResource(TemplateId, {
  name: Schema.String,
  description: Schema.String,
  paramsSchema: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "JSON Schema of params (the subset in docs/experiments.md is enforced)"
  }),
  defaults: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "ExperimentTemplate" })
export type Template = typeof Template.Type

export const CreateTemplate = Body({
  labId: LabRef,
  name: Name(200),
  description: Schema.optionalWith(Text(20_000), { default: () => "" }),
  paramsSchema: Schema.optionalWith(JsonObject("paramsSchema"), { default: () => ({}) }),
  defaults: Schema.optionalWith(JsonObject("defaults"), { default: () => ({}) })
}).annotations({ identifier: "CreateExperimentTemplate" })
export type CreateTemplate = typeof CreateTemplate.Type

// ---------------------------------------------------------------------------
// queues

export const Queue = LabResource(QueueId, {
  name: Schema.String,
  length: Schema.Number.annotations({ description: "experiments waiting (queued)" }),
  running: Schema.Number.annotations({ description: "experiments from this queue running now" }),
  waitingSeconds: Schema.Number.annotations({ description: "age of the oldest queued experiment; 0 when empty" }),
  oldestQueuedAt: Schema.NullOr(Timestamp),
  nextExperimentId: Schema.NullOr(Schema.String).annotations({ description: "the experiment that starts next" })
}).annotations({ identifier: "ExperimentQueue" })
export type Queue = typeof Queue.Type

export const QueueRequest = Body({
  labId: LabRef,
  name: Schema.optional(Name(100)).annotations({ description: "create a queue with this name" }),
  queueId: Schema.optional(Id).annotations({ description: "enqueue: the queue" }),
  experimentId: Schema.optional(Id).annotations({ description: "enqueue: the draft experiment" })
}).annotations({
  identifier: "ExperimentQueueRequest",
  description: "either {labId, name} to create a queue (201), or {labId, queueId, experimentId} to enqueue (202)"
})
export type QueueRequest = typeof QueueRequest.Type

// ---------------------------------------------------------------------------
// cost records

export const CostOrigin = Schema.Literal("manual", "pod").annotations({
  description: "manual: posted by a client; pod: the experiment's runtime on its pod, recorded by the service when it finishes"
})

export const ExperimentCost = Schema.Struct({
  id: CostId,
  labId: Schema.String,
  experimentId: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  category: CostCategory,
  source: Schema.String.annotations({ description: "where it came from: a provider, an API, `pod:<podId>`" }),
  description: Schema.String,
  origin: CostOrigin,
  incurredAt: Timestamp,
  createdAt: Timestamp
}).annotations({ identifier: "ExperimentCost" })
export type ExperimentCost = typeof ExperimentCost.Type

export const CreateExperimentCost = Body({
  labId: LabRef,
  experimentId: Id,
  amount: Amount(1_000_000_000),
  currency: Schema.optionalWith(Currency, { default: () => "USD" }),
  category: CostCategory,
  source: Name(200),
  description: Schema.optionalWith(Text(2_000), { default: () => "" }),
  incurredAt: Schema.optional(Timestamp).annotations({ description: "default now" })
}).annotations({ identifier: "CreateExperimentCost" })
export type CreateExperimentCost = typeof CreateExperimentCost.Type

export const CostListParams = Schema.Struct({
  labId: LabRef,
  experimentId: Schema.optional(Id),
  category: Schema.optional(CostCategory),
  from: Schema.optional(Timestamp).annotations({ description: "only records incurred at or after this time (ISO 8601)" }),
  to: Schema.optional(Timestamp).annotations({ description: "only records incurred before this time (ISO 8601)" })
})
