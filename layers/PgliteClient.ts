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
    const connection = connectionOver(db.send)
    // a transaction's statements all go to the thread it began on: one opened again meanwhile (after a PANIC) fails them
    const pinned = Effect.mapBoth(db.pinned, {
      onFailure: (cause) => new SqlError({ cause, message: "Failed to execute statement" }),
      onSuccess: connectionOver
    })

    // the connection first: the SqlClient does not release a lock taken by an acquirer that then fails
    const acquire = (mode: "shared" | "exclusive") =>
      Effect.flatMap(mode === "shared" ? Effect.succeed(connection) : pinned, (open) =>
        Effect.as(
          Effect.acquireRelease(
            Effect.flatMap(FiberRef.get(BackgroundWork), (background) => Effect.interruptible(lock.take(background, mode))),
            () => Effect.sync(() => lock.release(mode))
          ),
          open
        )
      )

    return yield* SqlClient.make({
      acquirer: acquire("shared"),
      transactionAcquirer: acquire("exclusive"),
      compiler: PgClient.makeCompiler(camelToSnake, false),
      transformRows: Statement.defaultTransforms(snakeToCamel, false).array,
      spanAttributes: [["db.system.name", "pglite"]]
    })
  })

/** The SqlClient's connection over a thread's `send`. */
const connectionOver = (send: PgliteWorker.Send): Connection => {
  const run = (operation: PgliteWorker.Operation) =>
    Effect.mapError(send(operation), (cause) => new SqlError({ cause, message: "Failed to execute statement" }))
  const rows = (operation: PgliteWorker.Operation): Effect.Effect<Rows, SqlError> =>
    Effect.flatMap(run(operation), (result) =>
      PgliteWorker.isRows(result) ? Effect.succeed(result) : Effect.fail(new SqlError({ message: "PGlite answered without rows" }))
    )

  // The simple protocol runs several statements at once, as pg does without parameters.
  const query = (sql: string, params: ReadonlyArray<unknown>): Effect.Effect<Rows, SqlError> =>
    params.length === 0 ? rows({ op: "exec", sql }) : rows({ op: "query", sql, params })

  return {
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
}

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
  const release = (mode: "shared" | "exclusive") => {
    if (mode === "exclusive") exclusive = false
    else shared--
    wake()
  }
  return {
    // a waiter given up (a readiness probe's timeout, a stop) leaves the queue, or gives back what it was just granted
    take: (background: boolean, mode: "shared" | "exclusive") =>
      Effect.async<void>((resume) => {
        let granted = false
        const waiter: Waiter = {
          exclusive: mode === "exclusive",
          go: () => {
            granted = true
            resume(Effect.void)
          }
        }
        if (waiting.length === 0 && (!background || waitingInBackground.length === 0) && free(waiter)) return grant(waiter)
        const queue = background ? waitingInBackground : waiting
        queue.push(waiter)
        return Effect.sync(() => {
          if (granted) return release(mode)
          const at = queue.indexOf(waiter)
          if (at >= 0) queue.splice(at, 1)
          // the first waiter leaving may let those behind it go
          wake()
        })
      }),
    release
  }
}

export const layer = (dataDir: string | undefined): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(dataDir)).pipe(Layer.provide(Reactivity.layer))
