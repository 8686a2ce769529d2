import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import type { Cursor } from "../http/Pagination.js"
import type { Aggregate, Bucket, IngestTelemetry, TelemetryAggregate, TelemetryBatch, TelemetryEvent } from "./TelemetryEvent.js"
import { type AggregateCursor, type StoredEvent, type TelemetryFilter, TelemetryRepo } from "./TelemetryRepo.js"

/** Names listed in the activity entry of a batch (the count is always complete). */
const NAMES_IN_ACTIVITY = 20

export class Telemetry extends Effect.Service<Telemetry>()("Telemetry", {
  dependencies: [TelemetryRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* TelemetryRepo
    const activity = yield* ActivityRepo

    /** Store a batch: one multi-row insert and one activity entry, in one transaction (all or nothing). */
    const ingest = (labId: string, actor: string, events: IngestTelemetry["events"]) =>
      Effect.gen(function* () {
        const now = new Date()
        const batchId = newId("telb")
        const rows: Array<StoredEvent> = events.map((event) => ({
          id: newId("tel"),
          labId,
          batchId,
          name: event.name,
          value: event.value,
          unit: event.unit ?? null,
          occurredAt: event.timestamp ?? now,
          attributes: JSON.stringify(event.attributes ?? {}),
          createdAt: now
        }))
        const names = [...new Set(rows.map((r) => r.name))].sort()
        const times = rows.map((r) => r.occurredAt.getTime())
        const batch: TelemetryBatch = {
          batchId,
          labId,
          accepted: rows.length,
          names,
          from: new Date(Math.min(...times)),
          to: new Date(Math.max(...times)),
          receivedAt: now
        }
        yield* repo.insert(rows)
        const shown = names.slice(0, NAMES_IN_ACTIVITY).join(", ")
        yield* activity.record({
          labId,
          kind: "telemetry.ingested",
          ref: batchId,
          actor,
          message: `Ingested ${rows.length} telemetry event${rows.length === 1 ? "" : "s"} (${shown}${names.length > NAMES_IN_ACTIVITY ? ", …" : ""})`,
          data: { count: rows.length, names: names.slice(0, NAMES_IN_ACTIVITY), from: batch.from.toISOString(), to: batch.to.toISOString() }
        })
        return batch
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const events = (labId: string, filter: TelemetryFilter, cursor: Option.Option<Cursor>, limit: number) =>
      Effect.map(repo.events(labId, filter, cursor, limit), (rows) => {
        const items: ReadonlyArray<TelemetryEvent> = rows.slice(0, limit)
        const last = items.at(-1)
        return {
          items,
          next: rows.length > limit && last ? Option.some<Cursor>({ createdAt: last.timestamp, id: last.id }) : Option.none<Cursor>()
        }
      })

    const aggregates = (
      labId: string,
      filter: TelemetryFilter,
      aggregate: Exclude<Aggregate, "none">,
      bucket: Option.Option<Bucket>,
      cursor: Option.Option<AggregateCursor>,
      limit: number
    ) =>
      Effect.map(repo.aggregates(labId, filter, aggregate, bucket, cursor, limit), (rows) => {
        const items: ReadonlyArray<TelemetryAggregate> = rows.slice(0, limit)
        const last = items.at(-1)
        return {
          items,
          next:
            rows.length > limit && last
              ? Option.some<AggregateCursor>({ bucket: last.bucket, name: last.name })
              : Option.none<AggregateCursor>()
        }
      })

    return { ingest, events, aggregates }
  })
}) {}
