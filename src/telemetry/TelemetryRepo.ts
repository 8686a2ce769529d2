import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import type { Cursor } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { type Aggregate, type Bucket, TelemetryAggregate, TelemetryEvent } from "./TelemetryEvent.js"

/** A stored row (selected with occurred_at AS timestamp). */
const EventRow = Schema.typeSchema(TelemetryEvent)

const AggregateRow = Schema.typeSchema(TelemetryAggregate)

/** Where a page of aggregates starts: after this (bucket, name). */
export interface AggregateCursor {
  readonly bucket: Date | null
  readonly name: string
}

export interface TelemetryFilter {
  readonly name: Option.Option<string>
  readonly from: Option.Option<Date>
  readonly to: Option.Option<Date>
}

/** One page of aggregates: one value per name (and bucket, when there is one). */
export interface AggregateQuery {
  readonly filter: TelemetryFilter
  readonly aggregate: Exclude<Aggregate, "none">
  readonly bucket: Option.Option<Bucket>
  readonly cursor: Option.Option<AggregateCursor>
  readonly limit: number
}

export type StoredEvent = {
  readonly id: string
  readonly labId: string
  readonly batchId: string
  readonly name: string
  readonly value: number
  readonly unit: string | null
  readonly occurredAt: Date
  readonly attributes: string
  readonly createdAt: Date
}

/** The largest finite double (float8, a JSON number): a sum beyond it is reported as it. */
const LARGEST = "1.7976931348623157e308"

/**
 * SQL of each aggregate (a fixed set: never user text). Sums and averages add
 * in numeric: in float8 two values near the largest double overflow, an error.
 */
const AGGREGATES: Record<Exclude<Aggregate, "none">, string> = {
  avg: "avg(value::numeric)",
  sum: `greatest(least(sum(value::numeric), ${LARGEST}), -${LARGEST})`,
  min: "min(value)",
  max: "max(value)",
  count: "count(*)"
}

const decodeEventRows = Schema.decodeUnknown(Schema.Array(EventRow))
const decodeAggregateRows = Schema.decodeUnknown(Schema.Array(AggregateRow))

export class TelemetryRepo extends Effect.Service<TelemetryRepo>()("TelemetryRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const where = (labId: LabId, filter: TelemetryFilter) => sql.and([
      sql`lab_id = ${labId}`,
      ...Option.toArray(Option.map(filter.name, (name) => sql`name = ${name}`)),
      ...Option.toArray(Option.map(filter.from, (from) => sql`occurred_at >= ${from.toISOString()}::timestamptz`)),
      ...Option.toArray(Option.map(filter.to, (to) => sql`occurred_at < ${to.toISOString()}::timestamptz`))
    ])

    /** One statement for the whole batch (at most 1,000 rows × 9 parameters). */
    const insert = (events: ReadonlyArray<StoredEvent>) => sql`INSERT INTO telemetry_events ${sql.insert(events)}`

    /** Raw events, newest first on (occurred_at, id). */
    const events = (labId: LabId, filter: TelemetryFilter, cursor: Option.Option<Cursor>, limit: number) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT id, lab_id, batch_id, name, value, unit, occurred_at AS timestamp, attributes, created_at
          FROM telemetry_events
          WHERE ${where(labId, filter)}
            AND ${Option.match(cursor, {
              onNone: () => sql`TRUE`,
              onSome: (c) => sql`(occurred_at, id) < (${c.createdAt.toISOString()}::timestamptz, ${c.id})`
            })}
          ORDER BY occurred_at DESC, id DESC
          LIMIT ${limit + 1}`
        return yield* decodeEventRows(rows)
      })

    /** One value per name (and bucket), newest bucket first, then by name. */
    const aggregates = (labId: LabId, { filter, aggregate, bucket, cursor, limit }: AggregateQuery) =>
      Effect.gen(function* () {
        const bucketSql = Option.match(bucket, {
          onNone: () => sql`NULL::timestamptz`,
          onSome: (unit) => sql`date_trunc(${sql.literal(`'${unit}'`)}, occurred_at, 'UTC')`
        })
        const after = Option.match(cursor, {
          onNone: () => sql`TRUE`,
          onSome: (c) =>
            c.bucket === null
              ? sql`name > ${c.name}`
              : sql`(bucket < ${c.bucket.toISOString()}::timestamptz OR (bucket = ${c.bucket.toISOString()}::timestamptz AND name > ${c.name}))`
        })
        const rows = yield* sql`
          SELECT * FROM (
            SELECT name, ${bucketSql} AS bucket, ${sql.literal(AGGREGATES[aggregate])}::float8 AS value,
                   count(*)::int AS count, min(occurred_at) AS first_at, max(occurred_at) AS last_at
            FROM telemetry_events
            WHERE ${where(labId, filter)}
            GROUP BY 1, 2
          ) buckets
          WHERE ${after}
          ORDER BY bucket DESC NULLS LAST, name
          LIMIT ${limit + 1}`
        return yield* decodeAggregateRows(rows.map((row) => ({ ...row, aggregate })))
      })

    return {
      insert: (events: ReadonlyArray<StoredEvent>) => insert(events),
      events: (labId: LabId, filter: TelemetryFilter, cursor: Option.Option<Cursor>, limit: number) =>
        Effect.orDie(events(labId, filter, cursor, limit)),
      aggregates: (labId: LabId, query: AggregateQuery) => Effect.orDie(aggregates(labId, query))
    }
  })
}) {}
