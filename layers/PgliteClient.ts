import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Statement from "@effect/sql/Statement"
import { Effect, FiberRef, Layer, Stream } from "effect"
import { BackgroundWork } from "../src/db/Priority.js"
import * as PgliteWorker from "./PgliteWorker.js"
import { camelToSnake, snakeToCamel } from "./SqlNames.js"

type Rows = ReadonlyArray<Record<string, unknown>>
type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/**
 * A SqlClient over embedded PGlite, which runs on a worker thread
 * (PgliteWorker.ts): a long statement (a sync's thousands of rows, the search
 * indexer's batch) no longer stops the event loop. PGlite is one session, so a
 * lock serialises statements and a transaction holds it for its whole scope
 * (no other statement can slip into an open transaction).
 */
export const make = (dataDir: string | undefined) =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PgliteWorker.start(dataDir),
        catch: (cause) => new SqlError({ cause, message: `PGlite: failed to open ${dataDir ?? "in-memory database"}` })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption(5000))
    )
    const lock = makeLock()
    const run = (operation: PgliteWorker.Operation) =>
      Effect.tryPromise({ try: () => db.send(operation), catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" }) })
    const rows = (operation: PgliteWorker.Operation): Effect.Effect<Rows, SqlError> =>
      Effect.flatMap(run(operation), (result) =>
        PgliteWorker.isRows(result) ? Effect.succeed(result) : Effect.fail(new SqlError({ message: "PGlite answered without rows" }))
      )

    // The simple protocol runs several statements at once, as pg does without parameters.
    const query = (sql: string, params: ReadonlyArray<unknown>): Effect.Effect<Rows, SqlError> =>
      params.length === 0 ? rows({ op: "exec", sql }) : rows({ op: "query", sql, params })

    const connection: Connection = {
      execute: (sql, params, transformRows: TransformRows) =>
        Effect.map(query(sql, params), (rows) => (transformRows ? transformRows(rows) : rows)),
      executeRaw: (sql, params) => run({ op: "raw", sql, params }),
      executeStream: (sql, params, transformRows: TransformRows) =>
        Stream.fromIterableEffect(Effect.map(query(sql, params), (rows) => (transformRows ? transformRows(rows) : rows))),
      executeValues: (sql, params) =>
        Effect.flatMap(run({ op: "query", sql, params, rowMode: "array" }), (result) =>
          PgliteWorker.isValueRows(result) ? Effect.succeed(result) : Effect.fail(new SqlError({ message: "PGlite answered without rows" }))
        ),
      executeUnprepared: (sql, params, transformRows: TransformRows) =>
        Effect.map(query(sql, params), (rows) => (transformRows ? transformRows(rows) : rows))
    }

    const acquire = Effect.as(
      Effect.acquireRelease(Effect.flatMap(FiberRef.get(BackgroundWork), lock.take), () => Effect.sync(lock.release)),
      connection
    )

    return yield* SqlClient.make({
      acquirer: acquire,
      transactionAcquirer: acquire,
      compiler: PgClient.makeCompiler(camelToSnake, false),
      transformRows: Statement.defaultTransforms(snakeToCamel, false).array,
      spanAttributes: [["db.system.name", "pglite"]]
    })
  })

/**
 * The session's lock. First come, first served (Effect's Semaphore lets
 * newcomers overtake waiters, which starved some requests under load: p99 of
 * seconds), except that background work (Priority.ts) waits while anyone else does.
 */
const makeLock = () => {
  let held = false
  const waiting: Array<() => void> = []
  const waitingInBackground: Array<() => void> = []
  return {
    take: (background: boolean) =>
      Effect.async<void>((resume) => {
        if (!held) {
          held = true
          return resume(Effect.void)
        }
        ;(background ? waitingInBackground : waiting).push(() => resume(Effect.void))
      }),
    release: () => {
      const next = waiting.shift() ?? waitingInBackground.shift()
      if (next) next()
      else held = false
    }
  }
}

export const layer = (dataDir: string | undefined): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(dataDir)).pipe(Layer.provide(Reactivity.layer))
