import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PGlite } from "@electric-sql/pglite"
import * as Statement from "@effect/sql/Statement"
import { Effect, Layer, Queue, Stream } from "effect"
import { camelToSnake, snakeToCamel } from "./SqlNames.js"

type Rows = ReadonlyArray<Record<string, unknown>>
type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/**
 * An in-process SqlClient over embedded PGlite. PGlite is one session, so a
 * semaphore serialises statements and a transaction holds it for its whole scope
 * (no other statement can slip into an open transaction).
 */
export const make = (dataDir: string | undefined) =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create(dataDir ? { dataDir } : {}),
        catch: (cause) => new SqlError({ cause, message: `PGlite: failed to open ${dataDir ?? "in-memory database"}` })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption(5000))
    )
    // A first-come-first-served lock: Effect's Semaphore lets newcomers overtake waiters, which starves
    // some requests under load (p99 of seconds); a one-token queue serves waiters in order.
    const lock = yield* Queue.bounded<void>(1)
    yield* Queue.offer(lock, undefined)

    const run = <A>(message: string, f: () => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (cause) => new SqlError({ cause, message }) })

    const query = (sql: string, params: ReadonlyArray<unknown>): Effect.Effect<Rows, SqlError> =>
      params.length === 0
        ? // The simple protocol runs several statements at once, as pg does without parameters.
          Effect.map(run("Failed to execute statement", () => db.exec(sql)), (results) => results.at(-1)?.rows ?? [])
        : Effect.map(run("Failed to execute statement", () => db.query<Record<string, unknown>>(sql, [...params])), (r) => r.rows)

    const connection: Connection = {
      execute: (sql, params, transformRows: TransformRows) =>
        Effect.map(query(sql, params), (rows) => (transformRows ? transformRows(rows) : rows)),
      executeRaw: (sql, params) => run("Failed to execute statement", () => db.query(sql, [...params])),
      executeStream: (sql, params, transformRows: TransformRows) =>
        Stream.fromIterableEffect(Effect.map(query(sql, params), (rows) => (transformRows ? transformRows(rows) : rows))),
      executeValues: (sql, params) =>
        Effect.map(
          run("Failed to execute statement", () => db.query<Array<unknown>>(sql, [...params], { rowMode: "array" })),
          (r) => r.rows
        ),
      executeUnprepared: (sql, params, transformRows: TransformRows) =>
        Effect.map(query(sql, params), (rows) => (transformRows ? transformRows(rows) : rows))
    }

    const acquire = Effect.as(Effect.acquireRelease(Queue.take(lock), () => Queue.offer(lock, undefined)), connection)

    return yield* SqlClient.make({
      acquirer: acquire,
      transactionAcquirer: acquire,
      compiler: PgClient.makeCompiler(camelToSnake, false),
      transformRows: Statement.defaultTransforms(snakeToCamel, false).array,
      spanAttributes: [["db.system.name", "pglite"]]
    })
  })

export const layer = (dataDir: string | undefined): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(dataDir)).pipe(Layer.provide(Reactivity.layer))
