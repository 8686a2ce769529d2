/**
 * PGlite meeting a full disk where PostgreSQL PANICs: it needs a new 16 MiB WAL segment (forced here by
 * pg_switch_wal) and the file system has 10 MiB left. PostgreSQL would restart and recover; PGlite's next statement
 * never returned (its thread spun at 100 % CPU, every later request waited for ever). Now the thread is ended at the
 * PANIC, statements fail at once with the disk-full SQLSTATE while the disk is full, and the database is opened again
 * (recovering what was committed) once space returns. On a small tmpfs of its own.
 */
import { Effect, Either } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as PgliteWorker from "../../layers/PgliteWorker.js"
import { allowingLongStatements } from "../../src/db/Priority.js"
import { canMountTmpfs, MIB, mountSmallDisk } from "../support/SmallDisk.js"

/** Longer than any of these statements takes, shorter than for ever. */
const HUNG = "20 seconds"

const codeOf = (error: unknown) => (typeof error === "object" && error !== null && "code" in error ? error.code : undefined)

describe.skipIf(!canMountTmpfs())("PGlite on a full disk", () => {
  it("a PANIC over a WAL segment it cannot write: no statement hangs after it, and the database opens again once space returns", { timeout: 180_000 }, async () => {
    const disk = await mountSmallDisk(96)
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* PgliteWorker.start(join(disk.dir, "db"), join(disk.dir, "no-template"))
            const ask = (sql: string) =>
              db.send({ op: "query", sql, params: [] }).pipe(Effect.timeout(HUNG), Effect.either, Effect.timed)
            yield* db.send({ op: "exec", sql: "CREATE TABLE t (x text); INSERT INTO t VALUES ('before')" })
            yield* Effect.promise(() => disk.fillTo(10 * MIB))
            yield* db.send({ op: "query", sql: "SELECT pg_switch_wal()", params: [] })

            const [, panicked] = yield* ask("INSERT INTO t VALUES ('during')")
            expect(Either.isLeft(panicked)).toBe(true)
            expect(Either.isLeft(panicked) && codeOf(panicked.left)).toBe("53100")

            // on main: a TimeoutException, the thread spinning
            const [, next] = yield* ask("SELECT count(*)::int AS n FROM t")
            expect(Either.isLeft(next) && String(next.left)).toMatch(/no room left on its disk/)
            expect(Either.isLeft(next) && codeOf(next.left)).toBe("53100")

            yield* Effect.promise(() => disk.release())
            yield* Effect.sleep(PgliteWorker.REOPEN_EVERY_MILLIS)
            const [, healed] = yield* ask("SELECT x FROM t ORDER BY x")
            expect(healed).toEqual(Either.right([{ x: "before" }]))
            const [, written] = yield* ask("INSERT INTO t VALUES ('after')")
            expect(Either.isRight(written)).toBe(true)
          })
        )
      )
    } finally {
      await disk.unmount()
    }
  })
})

describe("PGlite that stops answering", () => {
  it("a statement unanswered past the stall limit ends the thread (a stop would otherwise wait for ever); the next one opens the database again", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "pglite-stall-"))
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            // a statement that takes longer than the (lowered) limit stands for one that never returns
            const db = yield* PgliteWorker.start(join(dir, "db"), join(dir, "no-template"), 2_000)
            yield* db.send({ op: "exec", sql: "CREATE TABLE t (x text); INSERT INTO t VALUES ('kept')" })
            // within HUNG, or the answer is a TimeoutException
            const stuck = yield* db.send({ op: "query", sql: "SELECT pg_sleep(60)", params: [] }).pipe(Effect.timeout(HUNG), Effect.either)
            expect(Either.isLeft(stuck) && String(stuck.left)).toMatch(/PGlite answered nothing for 2 s: its thread was ended/)
            // a lost connection's SQLSTATE: a request that saved nothing is run again
            expect(Either.isLeft(stuck) && codeOf(stuck.left)).toBe("57P01")
            const rows = yield* db.send({ op: "query", sql: "SELECT x FROM t", params: [] })
            expect(rows).toEqual([{ x: "kept" }])
          })
        )
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("a statement allowed to run long (a migration, a restore) outlasts the stall limit and is answered", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "pglite-long-"))
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* PgliteWorker.start(join(dir, "db"), join(dir, "no-template"), 2_000)
            // twice the limit, while a plain statement queues behind it: neither is ended
            const [long, queued] = yield* Effect.all(
              [
                allowingLongStatements(db.send({ op: "query", sql: "SELECT pg_sleep(4), 'done' AS x", params: [] })),
                Effect.delay(db.send({ op: "query", sql: "SELECT 'next' AS x", params: [] }), "100 millis")
              ],
              { concurrency: "unbounded" }
            ).pipe(Effect.timeout(HUNG))
            expect(long).toEqual([{ pg_sleep: "", x: "done" }])
            expect(queued).toEqual([{ x: "next" }])
            // and the watchdog still ends a plain statement that outlasts it afterwards
            const stuck = yield* db.send({ op: "query", sql: "SELECT pg_sleep(60)", params: [] }).pipe(Effect.timeout(HUNG), Effect.either)
            expect(Either.isLeft(stuck) && String(stuck.left)).toMatch(/PGlite answered nothing for 2 s/)
          })
        )
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
