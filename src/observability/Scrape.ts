import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Metric, Option, Schema } from "effect"
import { databasePool, processMemory } from "./Metrics.js"
import { PoolStats } from "./PoolStats.js"
import { gaugeText, toPrometheusText } from "./Prometheus.js"

const Depths = Schema.Array(Schema.Struct({ labId: Schema.String, n: Schema.Number }))

const set = (gauge: Metric.Metric.Gauge<number>, key: string, value: string, n: number) =>
  Metric.set(Metric.tagged(gauge, key, value), n)

/**
 * What GET /metrics reads at each scrape: the gauges that are read rather than counted (the pool, the process's
 * memory) set now, the whole registry as Prometheus text, then the outbox depth per lab as the database has it.
 */
export class Scrape extends Effect.Service<Scrape>()("Scrape", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PoolStats
    // read at each scrape and written straight into the text: a lab whose outbox emptied, or that is gone, has no series
    const outbox = sql`SELECT lab_id, count(*)::int AS n FROM outbox WHERE set_aside_at IS NULL GROUP BY lab_id ORDER BY lab_id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Depths)),
      Effect.map((rows) =>
        gaugeText(
          "sync_outbox_depth",
          "Changes acknowledged but not yet pushed, by lab (read from the database when scraped)",
          rows.map((row) => [[["lab", row.labId]], row.n] as const)
        )
      ),
      Effect.catchAll((error) => Effect.as(Effect.logWarning("metrics: the outbox depth could not be read", error), ""))
    )

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
      text: Effect.zipRight(process_, Effect.zipWith(Effect.map(Metric.snapshot, toPrometheusText), outbox, (registry, depth) => registry + depth))
    }
  })
}) {}
