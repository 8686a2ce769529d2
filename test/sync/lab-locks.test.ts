/**
 * The labs' sync locks on PostgreSQL (layers/PgLabLocks.ts), two replicas as two pools: a lab held by one is busy for
 * the other until released; any number of labs held at once cost one pooled connection, which goes back to the pool
 * when none is held; a second holder in the same process is refused (a session's advisory locks are re-entrant).
 * Runs when DATABASE_URL is set (PGlite has one process and no advisory-lock sessions: LabLocks.singleProcess).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Exit, Layer, Redacted, Scope } from "effect"
import { connect, createServer, type Socket } from "node:net"
import pg from "pg"
import * as PgDatabase from "../../layers/PgDatabase.js"
import * as PgLabLocks from "../../layers/PgLabLocks.js"
import { PoolStats } from "../../src/observability/PoolStats.js"
import { exclusiveWithin, LabLocks, LockBusy, singleProcess } from "../../src/sync/LabLocks.js"

const DATABASE_URL = process.env["DATABASE_URL"]

/** A replica's locks on a pool of its own (of `max` connections, to `url`), and that pool's use. */
const replica = (max: number, url = DATABASE_URL ?? "") =>
  Effect.gen(function* () {
    const context = yield* Layer.build(PgLabLocks.layer.pipe(Layer.provideMerge(PgDatabase.layer(Redacted.make(url), max))))
    const locks = Context.get(context, LabLocks)
    const stats = Context.get(context, PoolStats)
    const inUse = () => {
      const s = stats()
      return s._tag === "Some" ? s.value.total - s.value.idle : -1
    }
    return { locks, inUse }
  })

/**
 * A proxy in front of PostgreSQL that `stall()` makes silent, as a partition or a frozen host would: what is sent
 * stays unanswered and nothing is closed; a side that closes its socket still closes the other (so PostgreSQL sees a
 * dropped connection end).
 */
const stallingProxy = Effect.acquireRelease(
  Effect.promise(async () => {
    const target = new URL(DATABASE_URL ?? "")
    const pairs = new Set<readonly [Socket, Socket]>()
    let stalled = false
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname)
      const pair = [client, upstream] as const
      pairs.add(pair)
      for (const [from, to] of [pair, [upstream, client] as const]) {
        from.on("data", (chunk: Buffer) => (stalled ? undefined : to.write(chunk)))
        from.on("close", () => {
          pairs.delete(pair)
          to.destroy()
        })
        from.on("error", () => to.destroy())
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const url = new URL(target.toString())
    url.hostname = "127.0.0.1"
    url.port = String(port)
    return {
      url: url.toString(),
      stall: () => (stalled = true),
      resume: () => (stalled = false),
      close: () =>
        new Promise<void>((resolve) => {
          for (const [a, b] of pairs) (a.destroy(), b.destroy())
          server.close(() => resolve())
        })
    }
  }),
  (proxy) => Effect.promise(proxy.close)
)

/** Is `lab` lockable from a session of its own, directly on PostgreSQL (the lock given back at once)? */
const lockableElsewhere = (lab: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL })
    await client.connect()
    const [hashed] = (await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(7341003, hashtext($1)) AS locked", [lab])).rows
    await client.end()
    return hashed?.locked === true
  })

const held = (locks: LabLocks["Type"], labId: string) =>
  Effect.flatMap(Scope.make(), (scope) => Effect.as(Scope.extend(locks.lock(labId), scope), scope))

describe("a link change's wait for the lab's lock", () => {
  it.live("is what is timed: a change that started runs to its end and its result is the answer, never LockBusy", () =>
    Effect.gen(function* () {
      const locks = yield* LabLocks
      let applied = false
      const change = Effect.uninterruptible(Effect.zipRight(Effect.sleep("300 millis"), Effect.sync(() => (applied = true))))
      const answer = yield* Effect.either(exclusiveWithin(locks, "lab_timed", Effect.as(change, "changed"), "100 millis"))
      expect(applied).toBe(true)
      expect(answer).toEqual(Either.right("changed"))
    }).pipe(Effect.provide(singleProcess))
  )
})

describe.skipIf(DATABASE_URL === undefined)("the labs' sync locks on PostgreSQL", () => {
  it.scopedLive("a lab held on one replica is busy on another until released; 16 labs held cost one connection", () =>
    Effect.gen(function* () {
      const a = yield* replica(3)
      const b = yield* replica(3)
      const lab = `lab_locks_${Date.now().toString(36)}`

      const first = yield* held(a.locks, lab)
      expect(yield* Effect.either(held(b.locks, lab))).toEqual(Either.left(new LockBusy()))
      // the same process asking again is refused too, though PostgreSQL would grant its own session the lock twice
      expect(yield* Effect.either(held(a.locks, lab))).toEqual(Either.left(new LockBusy()))

      const others = yield* Effect.forEach(Array.from({ length: 16 }, (_, i) => `${lab}_${i}`), (id) => held(a.locks, id))
      expect(a.inUse()).toBe(1)
      // each lab is its own lock
      const elsewhere = yield* held(b.locks, `${lab}_other`)
      yield* Scope.close(elsewhere, Exit.void)

      yield* Scope.close(first, Exit.void)
      const second = yield* held(b.locks, lab)
      yield* Scope.close(second, Exit.void)
      for (const scope of others) yield* Scope.close(scope, Exit.void)
      // nothing held: the connection is back in the pool
      expect(a.inUse()).toBe(0)
      expect(b.inUse()).toBe(0)
    }), 60_000)

  it.scopedLive("a lock session whose connection is lost is replaced: its labs are free for others, and new locks work", () =>
    Effect.gen(function* () {
      const a = yield* replica(3)
      const b = yield* replica(3)
      const lab = `lab_locks_lost_${Date.now().toString(36)}`
      yield* held(a.locks, lab)
      // the backend holding the replica's locks, ended as a restart or a network cut would
      yield* Effect.promise(async () => {
        const client = new pg.Client({ connectionString: DATABASE_URL })
        await client.connect()
        await client.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext($1)::oid", [lab])
        await client.end()
      })
      yield* Effect.sleep("200 millis")
      const taken = yield* held(b.locks, lab)
      yield* Scope.close(taken, Exit.void)
      // the first lab's holder has not ended: a new one on that replica opens a new session
      const next = yield* Effect.retry(held(a.locks, `${lab}_next`), { times: 3 })
      yield* Scope.close(next, Exit.void)
    }), 60_000)

  // finding: the session's statements had no bound, so a silent database held every lock and unlock of the replica
  it.scopedLive("a database gone silent fails a lock attempt within the session timeout; its labs are freed, and a later lock works", () =>
    Effect.gen(function* () {
      const proxy = yield* stallingProxy
      const a = yield* replica(3, proxy.url)
      const lab = `lab_locks_silent_${Date.now().toString(36)}`
      yield* held(a.locks, lab)
      proxy.stall()
      const started = Date.now()
      const attempt = yield* Effect.either(held(a.locks, `${lab}_second`))
      expect(attempt._tag === "Left" && attempt.left._tag).toBe("LockUnavailable")
      expect(Date.now() - started).toBeLessThan(Duration.toMillis(PgLabLocks.SESSION_STATEMENT_TIMEOUT) + 2_000)
      // the session's connection was destroyed: PostgreSQL ended its locks
      yield* Effect.sleep("300 millis")
      expect(yield* lockableElsewhere(lab)).toBe(true)
      proxy.resume()
      const next = yield* Effect.retry(held(a.locks, `${lab}_third`), { times: 3 })
      yield* Scope.close(next, Exit.void)
    }), 60_000)

  // finding: an unlock that failed (not as a lost connection) kept the session, and the lab locked, until a restart
  it.scopedLive("an unlock whose statement fails drops the session: the lab is lockable from another session", () =>
    Effect.gen(function* () {
      const proxy = yield* stallingProxy
      const a = yield* replica(3, proxy.url)
      const lab = `lab_locks_unlock_${Date.now().toString(36)}`
      const first = yield* held(a.locks, lab)
      const other = yield* held(a.locks, `${lab}_other`)
      proxy.stall()
      // the unlock is not answered: its statement times out, a failure other than a connection seen lost
      yield* Scope.close(first, Exit.void)
      yield* Effect.sleep("300 millis")
      expect(yield* lockableElsewhere(lab)).toBe(true)
      proxy.resume()
      yield* Scope.close(other, Exit.void)
      const again = yield* Effect.retry(held(a.locks, lab), { times: 3 })
      yield* Scope.close(again, Exit.void)
    }), 60_000)
})
