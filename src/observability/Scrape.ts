import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Metric, Option, Schema } from "effect"
import { databasePool, outboxDepth, processMemory } from "./Metrics.js"
import { PoolStats } from "./PoolStats.js"
import { toPrometheusText } from "./Prometheus.js"

const Depths = Schema.Array(Schema.Struct({ labId: Schema.String, n: Schema.Number }))

const set = (gauge: Metric.Metric.Gauge<number>, key: string, value: string, n: number) =>
  Metric.set(Metric.tagged(gauge, key, value), n)

/**
 * What GET /metrics reads at each scrape: the gauges that are read rather than counted (outbox depth per lab,
 * the pool, the process's memory) set now, then the whole registry as Prometheus text.
 */
export class Scrape extends Effect.Service<Scrape>()("Scrape", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PoolStats
    // a lab whose outbox emptied is no longer in the query's answer: its gauge is set back to 0 once
    let labsWithDepth = new Set<string>()

    const outbox = Effect.gen(function* () {
      const rows = yield* Schema.decodeUnknown(Depths)(
        yield* sql`SELECT lab_id, count(*)::int AS n FROM outbox WHERE set_aside_at IS NULL GROUP BY lab_id`
      )
      const now = new Set(rows.map((row) => row.labId))
      for (const labId of labsWithDepth) if (!now.has(labId)) yield* set(outboxDepth, "lab", labId, 0)
      for (const row of rows) yield* set(outboxDepth, "lab", row.labId, row.n)
      labsWithDepth = now
    }).pipe(Effect.catchAll((error) => Effect.logWarning("metrics: the outbox depth could not be read", error)))

    const process_ = Effect.gen(function* () {
      const memory = process.memoryUsage()
      yield* set(processMemory, "kind", "rss", memory.rss)
      yield* set(processMemory, "kind", "heap_used", memory.heapUsed)
      yield* set(processMemory, "kind", "heap_total", memory.heapTotal)
      yield* set(processMemory, "kind", "external", memory.external)
      const use = pool()
      if (Option.isSome(use)) {
        yield* set(databasePool, "state", "total", use.value.total)
        yield* set(databasePool, "state", "idle", use.value.idle)
        yield* set(databasePool, "state", "waiting", use.value.waiting)
      }
    })

    return {
      text: Effect.zipRight(Effect.zipRight(outbox, process_), Effect.map(Metric.snapshot, toPrometheusText))
    }
  })
}) {}
