import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { PoolStats } from "../src/observability/PoolStats.js"
import * as pg from "pg"
import { parseTimestamptz } from "./PgTimestamps.js"
import { camelToSnake, snakeToCamel } from "./SqlNames.js"

const INT8 = 20
const TIMESTAMPTZ = 1184
const timestamptz = parseTimestamptz(pg.types.getTypeParser(TIMESTAMPTZ, "text"))

/**
 * int8 as a JS number, as PGlite returns it, so both drivers decode alike;
 * timestamptz as pg parses it, through a fast path for UTC (layers/PgTimestamps.ts).
 */
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === INT8
      ? (value: string) => Number(value)
      : oid === TIMESTAMPTZ && format !== "binary"
        ? timestamptz
        : pg.types.getTypeParser(oid, format)
} as pg.CustomTypesConfig

/**
 * The pool is made here, as PgClient.layer would make it, so that its use can be read for GET /metrics (PoolStats).
 * pg reports an idle client's lost connection on the pool: PgClient.layer ignores it too (the next query reconnects).
 */
export const layer = (url: Redacted.Redacted<string>, maxConnections = 10) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => {
          const pool = new pg.Pool({ connectionString: Redacted.value(url), max: maxConnections, application_name: "lab-service", types })
          pool.on("error", () => {})
          return pool
        }),
        (pool) => Effect.promise(() => pool.end())
      ),
      (pool) =>
        Layer.merge(
          PgClient.layerFromPool({
            acquire: Effect.succeed(pool),
            applicationName: "lab-service",
            types,
            // columns are snake_case in SQL and camelCase in rows; JSON values are left as stored
            transformQueryNames: camelToSnake,
            transformResultNames: snakeToCamel,
            transformJson: false
          }),
          Layer.succeed(PoolStats, () => Option.some({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }))
        )
    )
  )
