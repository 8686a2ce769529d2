/**
 * The rules of src/db/ConnectionLoss.ts, each made deterministic: a lost
 * connection is injected at a chosen point of a request's database work (on
 * embedded PGlite, through the service's own SqlClient layer) and the test
 * checks whether the request ran again, and what it says when it cannot.
 * test/db/connection-loss.test.ts drops real PostgreSQL connections under load.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Ref, TestServices } from "effect"
import * as Database from "../../layers/Database.js"
import { DatabaseUnavailable, isConnectionLoss, isPoolBusy, isTransientConflict, notCounted, withConnectionRetry } from "../../src/db/ConnectionLoss.js"

/** What pg reports for a backend ended by pg_terminate_backend while a statement ran. */
const terminated = () =>
  new SqlError({
    message: "Failed to execute statement",
    cause: Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" })
  })

/** What @effect/sql-pg reports when every connection of pg's pool stayed in use for its connection timeout. */
const poolBusy = () => new SqlError({ message: "Failed to acquire connection", cause: new Error("timeout exceeded when trying to connect") })

/** What pg reports for a statement PostgreSQL chose to end a deadlock with (its transaction rolled back). */
const deadlocked = () =>
  new SqlError({ message: "Failed to execute statement", cause: Object.assign(new Error("deadlock detected"), { code: "40P01" }) })

describe("what a lost connection is", () => {
  it("is a terminated backend, a connection class SQLSTATE, a dropped socket or no connection to be had", () => {
    expect(isConnectionLoss(terminated())).toBe(true)
    expect(isConnectionLoss(new SqlError({ message: "x", cause: Object.assign(new Error("x"), { code: "08006" }) }))).toBe(true)
    expect(isConnectionLoss(new SqlError({ message: "x", cause: Object.assign(new Error("read"), { code: "ECONNRESET" }) }))).toBe(true)
    expect(isConnectionLoss(new SqlError({ message: "x", cause: new Error("Connection terminated unexpectedly") }))).toBe(true)
    expect(isConnectionLoss(new SqlError({ message: "Failed to acquire connection", cause: new Error("x") }))).toBe(true)
  })
  it("is apart from a transaction rolled back to settle a deadlock or a serialization conflict", () => {
    expect(isTransientConflict(deadlocked())).toBe(true)
    expect(isTransientConflict(new SqlError({ message: "x", cause: Object.assign(new Error("could not serialize"), { code: "40001" }) }))).toBe(true)
    expect(isTransientConflict(terminated())).toBe(false)
    expect(isConnectionLoss(deadlocked())).toBe(false)
  })
  it("is not a pool that is only busy (every connection in use), which is told apart; a new connection timing out is a loss", () => {
    expect(isPoolBusy(poolBusy())).toBe(true)
    expect(isConnectionLoss(poolBusy())).toBe(false)
    const connectTimeout = new SqlError({ message: "Failed to acquire connection", cause: new Error("Connection terminated due to connection timeout") })
    expect(isPoolBusy(connectTimeout)).toBe(false)
    expect(isConnectionLoss(connectTimeout)).toBe(true)
  })
  it("is not a statement the database refused", () => {
    expect(isConnectionLoss(new SqlError({ message: "x", cause: Object.assign(new Error("dup"), { code: "23505" }) }))).toBe(false)
    expect(isConnectionLoss(new Error("Connection terminated"))).toBe(false)
  })
})

const table = `retry_probe_${Date.now().toString(36)}`

layer(Database.layer({ kind: "pglite", dataDir: undefined }))("a request that lost its connection", (it) => {
  const setUp = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (name text)`))
  const rows = (name: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE name = $1`, [name]), (r) => r[0]?.n ?? 0)
    )
  const insert = (name: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`INSERT INTO ${table} (name) VALUES ($1)`, [name]))

  /** Run `request` under the retry; the connection is lost on each of the first `losses` runs at the point `lose` marks. */
  const run = <A>(
    losses: number,
    request: (lose: Effect.Effect<void, SqlError>) => Effect.Effect<A, SqlError, SqlClient.SqlClient>,
    failure: () => SqlError = terminated
  ) =>
    Effect.gen(function* () {
      yield* setUp
      const runs = yield* Ref.make(0)
      const lose = Effect.flatMap(Ref.get(runs), (n) => (n <= losses ? Effect.fail(failure()) : Effect.void))
      // the retries' delays on the real clock
      const exit = yield* withConnectionRetry(Effect.zipRight(Ref.update(runs, (n) => n + 1), Effect.orDie(request(lose)))).pipe(
        Effect.exit,
        TestServices.provideLive
      )
      return { exit, runs: yield* Ref.get(runs) }
    })

  it.effect("runs a read again, and answers it", () =>
    Effect.gen(function* () {
      const { exit, runs } = yield* run(2, (lose) => Effect.zipRight(lose, rows("nobody")))
      expect(exit).toEqual(Exit.succeed(0))
      expect(runs).toBe(3)
    })
  )

  it.effect("runs again a transaction that lost its connection before its commit: the write is made once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { exit, runs } = yield* run(1, (lose) => sql.withTransaction(Effect.zipRight(insert("before-commit"), lose)))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(runs).toBe(2)
      expect(yield* rows("before-commit")).toBe(1)
    })
  )

  it.effect("does not run again once a transaction's commit was sent: 503 that says it may have landed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // the connection lost right after the body: as when the COMMIT's answer never comes back
      const { exit, runs } = yield* run(5, (lose) => Effect.zipRight(sql.withTransaction(insert("after-commit")), lose))
      expect(exit).toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: true })))
      expect(runs).toBe(1)
      expect(yield* rows("after-commit")).toBe(1)
    })
  )

  it.effect("does not run again a write made outside a transaction", () =>
    Effect.gen(function* () {
      const { exit, runs } = yield* run(5, (lose) => Effect.zipRight(insert("autocommit"), lose))
      expect(exit).toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: true })))
      expect(runs).toBe(1)
      expect(yield* rows("autocommit")).toBe(1)
    })
  )

  it.effect("runs again a read whose only write is bookkeeping (notCounted), and says nothing was changed when it gives up", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const noted = (lose: Effect.Effect<void, SqlError>) =>
        Effect.zipRight(Effect.zipRight(notCounted(Effect.zipRight(insert("bookkeeping"), sql.withTransaction(insert("bookkeeping")))), lose), rows("nobody"))
      const { exit, runs } = yield* run(2, noted)
      expect(exit).toEqual(Exit.succeed(0))
      expect(runs).toBe(3)
      const given = yield* run(100, noted)
      expect(given.exit).toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: false })))
      // the request's own writes still count, beside bookkeeping
      const own = yield* run(5, (lose) => Effect.zipRight(Effect.zipRight(notCounted(insert("bookkeeping")), insert("own")), lose))
      expect(own.exit).toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: true })))
      expect(own.runs).toBe(1)
    })
  )

  it.effect("gives up on a connection lost run after run: 503 that says nothing was changed", () =>
    Effect.gen(function* () {
      const { exit, runs } = yield* run(100, (lose) => Effect.zipRight(lose, rows("nobody")))
      expect(exit).toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: false })))
      expect(runs).toBe(5)
    })
  )

  it.effect("does not run again a request that waited for a busy pool: 503 that says the database is busy and nothing was changed", () =>
    Effect.gen(function* () {
      const { exit, runs } = yield* run(100, (lose) => Effect.zipRight(lose, rows("nobody")), poolBusy)
      expect(exit).toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: false, busy: true })))
      expect(runs).toBe(1)
    })
  )

  it.effect("runs again a transaction the database rolled back to break a deadlock: the write is made once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { exit, runs } = yield* run(1, (lose) => sql.withTransaction(Effect.zipRight(insert("deadlocked"), lose)), deadlocked)
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(runs).toBe(2)
      expect(yield* rows("deadlocked")).toBe(1)
    })
  )

  it.effect("leaves any other failure alone", () =>
    Effect.gen(function* () {
      const { exit, runs } = yield* run(0, () => Effect.fail(new SqlError({ message: "unique", cause: { code: "23505" } })))
      expect(Exit.isFailure(exit) && !Exit.isInterrupted(exit)).toBe(true)
      expect(exit).not.toEqual(Exit.fail(new DatabaseUnavailable({ mayHaveLanded: false })))
      expect(runs).toBe(1)
    })
  )
})
