import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
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

/** A start against a database that does not answer fails after this instead of waiting. */
const CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * The pool as PgClient.layer makes it (a first `SELECT 1` within CONNECT_TIMEOUT, its end bounded to 1 s), made here
 * so that its use can be read for GET /metrics (PoolStats). pg reports an idle client's lost connection on the pool:
 * ignored, as PgClient.layer does (the next query reconnects).
 */
const pool = (url: Redacted.Redacted<string>, maxConnections: number) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const made = new pg.Pool({
        connectionString: Redacted.value(url),
        max: maxConnections,
        connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
        // TCP keepalives on the client side too, so that a connection to a host gone silent ends rather than hangs
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
        application_name: "lab-service",
        types
      })
      made.on("error", () => {})
      yield* Effect.tryPromise({
        try: () => made.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({ duration: CONNECT_TIMEOUT, onTimeout: () => new SqlError({ cause: null, message: "PgClient: Connection timed out" }) }),
        Effect.tapError(() => Effect.promise(() => made.end()).pipe(Effect.timeoutOption(1000)))
      )
      return made
    }),
    (made) => Effect.promise(() => made.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  )

export const layer = (url: Redacted.Redacted<string>, maxConnections = 10) =>
  Layer.unwrapScoped(
    Effect.map(pool(url, maxConnections), (made) =>
      Layer.merge(
        PgClient.layerFromPool({
          acquire: Effect.succeed(made),
          applicationName: "lab-service",
          types,
          // columns are snake_case in SQL and camelCase in rows; JSON values are left as stored
          transformQueryNames: camelToSnake,
          transformResultNames: snakeToCamel,
          transformJson: false
        }),
        Layer.succeed(PoolStats, () => Option.some({ total: made.totalCount, idle: made.idleCount, waiting: made.waitingCount }))
      )
    )
  )
