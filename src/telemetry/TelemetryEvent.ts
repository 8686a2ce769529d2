import { Schema } from "effect"
import { Body, DateRange, LabRef, Timestamp } from "../common/Schemas.js"
import { PageParams } from "../db/Paging.js"

/** Events per POST. */
export const MAX_BATCH = 1000
/** Attributes per event, and the bounds of their keys and string values. */
export const MAX_ATTRIBUTES = 32
export const MAX_ATTRIBUTE_KEY = 64
export const MAX_ATTRIBUTE_STRING = 256

const EARLIEST = Date.UTC(1970, 0, 1)
const LATEST = Date.UTC(10_000, 0, 1)

/** A metric name: `train.loss`, `gpu/0/util`, `eval:accuracy`. */
export const MetricName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/, {
    message: () => "must be 1-128 characters: letters, digits and _ . : / - (not starting with . : / -)"
  })
).annotations({ description: "the metric's name, e.g. train.loss or gpu/0/util" })

const EventTime = Timestamp.pipe(
  Schema.filter((d) => (d.getTime() >= EARLIEST && d.getTime() < LATEST) || "must be between 1970 and 9999")
).annotations({ description: "when it happened (ISO 8601); default: when the batch was received" })

export const AttributeValue = Schema.Union(
  Schema.String.pipe(Schema.maxLength(MAX_ATTRIBUTE_STRING)),
  Schema.Number.pipe(Schema.finite()),
  Schema.Boolean,
  Schema.Null
)

/** Flat, bounded key/value pairs: strings (≤ 256), finite numbers, booleans, null. */
export const Attributes = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_ATTRIBUTE_KEY)),
  value: AttributeValue
})
  .pipe(Schema.filter((r) => Object.keys(r).length <= MAX_ATTRIBUTES || `must have at most ${MAX_ATTRIBUTES} keys`))
  .annotations({
    description: `at most ${MAX_ATTRIBUTES} keys of 1-${MAX_ATTRIBUTE_KEY} characters; values are strings (≤ ${MAX_ATTRIBUTE_STRING}), finite numbers, booleans or null`
  })
export type Attributes = typeof Attributes.Type

/** One event as ingested. */
export const EventInput = Body({
  name: MetricName,
  value: Schema.Number.pipe(Schema.finite({ message: () => "must be a finite number" })),
  unit: Schema.optional(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(32))).annotations({
    description: "e.g. s, ms, bytes, %, usd"
  }),
  timestamp: Schema.optional(EventTime),
  attributes: Schema.optional(Attributes)
})

export const IngestTelemetry = Body({
  labId: LabRef,
  events: Schema.Array(EventInput).pipe(
    Schema.minItems(1, { message: () => "must hold at least one event" }),
    Schema.maxItems(MAX_BATCH, { message: () => `must hold at most ${MAX_BATCH} events` })
  )
})
export type IngestTelemetry = typeof IngestTelemetry.Type

/** A stored event. */
export const TelemetryEvent = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  batchId: Schema.String.annotations({ description: "the POST that brought it (also the ref of its activity entry)" }),
  name: Schema.String,
  value: Schema.Number,
  unit: Schema.NullOr(Schema.String),
  timestamp: Timestamp,
  attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  createdAt: Timestamp.annotations({ description: "when it was received" })
}).annotations({ identifier: "TelemetryEvent" })
export type TelemetryEvent = typeof TelemetryEvent.Type

/** The answer to an ingest. */
export const TelemetryBatch = Schema.Struct({
  batchId: Schema.String,
  labId: Schema.String,
  accepted: Schema.Number.annotations({ description: "events stored (all of the batch, or none on an error)" }),
  names: Schema.Array(Schema.String).annotations({ description: "the distinct metric names of the batch" }),
  from: Timestamp.annotations({ description: "the earliest event timestamp of the batch" }),
  to: Timestamp.annotations({ description: "the latest event timestamp of the batch" }),
  receivedAt: Timestamp
}).annotations({ identifier: "TelemetryBatch" })
export type TelemetryBatch = typeof TelemetryBatch.Type

export const Aggregate = Schema.Literal("none", "avg", "sum", "min", "max", "count")
export type Aggregate = typeof Aggregate.Type
export const Bucket = Schema.Literal("minute", "hour", "day")
export type Bucket = typeof Bucket.Type

/** One aggregated value: per metric name, and per time bucket when one is asked for. */
export const TelemetryAggregate = Schema.Struct({
  name: Schema.String,
  aggregate: Aggregate,
  bucket: Schema.NullOr(Timestamp).annotations({
    description: "the start of the bucket (UTC); null when the whole range is aggregated (no `bucket` parameter)"
  }),
  value: Schema.Number.annotations({ description: "the aggregate of the values (for count: the number of events)" }),
  count: Schema.Number.annotations({ description: "events in the bucket" }),
  firstAt: Timestamp.annotations({ description: "the earliest event of the bucket" }),
  lastAt: Timestamp.annotations({ description: "the latest event of the bucket" })
}).annotations({ identifier: "TelemetryAggregate" })
export type TelemetryAggregate = typeof TelemetryAggregate.Type

export const TelemetryQuery = Schema.Struct({
  labId: LabRef,
  name: Schema.optional(MetricName).annotations({ description: "only this metric (all metrics otherwise)" }),
  from: DateRange.from.annotations({ description: "only events at or after this time (ISO 8601)" }),
  to: DateRange.to.annotations({ description: "only events before this time (ISO 8601)" }),
  aggregate: Schema.optional(Aggregate).annotations({
    description: "none (default): the raw events, newest first; otherwise one value per metric name (and bucket)"
  }),
  bucket: Schema.optional(Bucket).annotations({
    description: "with an aggregate: one value per UTC minute, hour or day, newest bucket first"
  }),
  ...PageParams
})
