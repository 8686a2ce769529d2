import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
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
 * indexer's batch) no longer stops the event loop. PGlite is one session: a
 * transaction holds the lock for its whole scope (no other statement can slip
 * into it), single statements share it (makeLock).
 */
export const make = (dataDir: string | undefined) =>
  Effect.gen(function* () {
    const db = yield* PgliteWorker.start(dataDir).pipe(
      Effect.mapError((cause) => new SqlError({ cause, message: `PGlite: failed to open ${dataDir ?? "in-memory database"}` }))
    )
    const lock = makeLock()
    const run = (operation: PgliteWorker.Operation) =>
      Effect.mapError(db.send(operation), (cause) => new SqlError({ cause, message: "Failed to execute statement" }))
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

    const acquire = (mode: "shared" | "exclusive") =>
      Effect.as(
        Effect.acquireRelease(
          Effect.flatMap(FiberRef.get(BackgroundWork), (background) => lock.take(background, mode)),
          () => Effect.sync(() => lock.release(mode))
        ),
        connection
      )

    return yield* SqlClient.make({
      acquirer: acquire("shared"),
      transactionAcquirer: acquire("exclusive"),
      compiler: PgClient.makeCompiler(camelToSnake, false),
      transformRows: Statement.defaultTransforms(snakeToCamel, false).array,
      spanAttributes: [["db.system.name", "pglite"]]
    })
  })

/**
 * The session's lock. A single statement takes it shared: the worker runs
 * statements one at a time in the order they come (PGlite queues them), so
 * several can be on their way at once and the worker never waits for the
 * event loop between two. A transaction takes it exclusive: no other statement
 * slips into it. Waiters are served first come, first served (Effect's
 * Semaphore lets newcomers overtake waiters, which starved some requests under
 * load: p99 of seconds), except that background work (Priority.ts) waits while
 * anyone else does.
 */
const makeLock = () => {
  interface Waiter {
    readonly exclusive: boolean
    readonly go: () => void
  }
  let shared = 0
  let exclusive = false
  const waiting: Array<Waiter> = []
  const waitingInBackground: Array<Waiter> = []
  const free = (w: Waiter) => !exclusive && (w.exclusive ? shared === 0 : true)
  const grant = (w: Waiter) => {
    if (w.exclusive) exclusive = true
    else shared++
    w.go()
  }
  // in order: the first waiter that cannot go yet stops everyone behind it
  const wake = () => {
    for (const queue of [waiting, waitingInBackground]) {
      while (queue.length > 0) {
        const next = queue[0]
        if (next === undefined || !free(next)) return
        queue.shift()
        grant(next)
      }
    }
  }
  return {
    take: (background: boolean, mode: "shared" | "exclusive") =>
      Effect.async<void>((resume) => {
        const waiter: Waiter = { exclusive: mode === "exclusive", go: () => resume(Effect.void) }
        if (waiting.length === 0 && (!background || waitingInBackground.length === 0) && free(waiter)) return grant(waiter)
        ;(background ? waitingInBackground : waiting).push(waiter)
      }),
    release: (mode: "shared" | "exclusive") => {
      if (mode === "exclusive") exclusive = false
      else shared--
      wake()
    }
  }
}

export const layer = (dataDir: string | undefined): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(dataDir)).pipe(Layer.provide(Reactivity.layer))
