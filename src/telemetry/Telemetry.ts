import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { newId } from "../common/Ids.js"
import type { Cursor } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import type { IngestTelemetry, TelemetryAggregate, TelemetryBatch, TelemetryEvent } from "./TelemetryEvent.js"
import { type AggregateCursor, type AggregateQuery, type StoredEvent, type TelemetryFilter, TelemetryRepo } from "./TelemetryRepo.js"
import { inTransaction } from "../db/Transaction.js"

/** A page of `limit` items from `rows` (fetched one more), and where the next starts when there is one. */
const pageAfter = <A, C>(rows: ReadonlyArray<A>, limit: number, cursorOf: (last: A) => C) => {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return { items, next: rows.length > limit && last !== undefined ? Option.some(cursorOf(last)) : Option.none<C>() }
}

/** Names listed in the activity entry of a batch (the count is always complete). */
const NAMES_IN_ACTIVITY = 20

export class Telemetry extends Effect.Service<Telemetry>()("Telemetry", {
  dependencies: [TelemetryRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity } = yield* Effect.all(resourceDeps(TelemetryRepo))

    /** Store a batch: one multi-row insert and one activity entry, in one transaction (all or nothing). */
    const ingest = (labId: LabId, actor: string, events: IngestTelemetry["events"]) =>
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
      }).pipe(inTransaction(sql))

    const events = (labId: LabId, filter: TelemetryFilter, cursor: Option.Option<Cursor>, limit: number) =>
      Effect.map(repo.events(labId, filter, cursor, limit), (rows) =>
        pageAfter<TelemetryEvent, Cursor>(rows, limit, (last) => ({ createdAt: last.timestamp, id: last.id }))
      )

    const aggregates = (labId: LabId, query: AggregateQuery) =>
      Effect.map(repo.aggregates(labId, query), (rows) =>
        pageAfter<TelemetryAggregate, AggregateCursor>(rows, query.limit, (last) => ({ bucket: last.bucket, name: last.name }))
      )

    return { ingest, events, aggregates }
  })
}) {}
