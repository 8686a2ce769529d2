/**
 * The sync worker in virtual time (TestClock) on the in-memory git and PGlite: how often it tries while the host is
 * down whatever the write traffic, how soon pending writes land once it is back, and how a stop answers forced syncs
 * and ends. Git and the database run for real; only the worker's waits are virtual.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Context, Duration, Effect, Exit, Fiber, Layer, Option, Redacted, Scope, TestClock, TestServices } from "effect"
import { systemLab } from "../../src/labs/LabId.js"
import { randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import * as GitMemory from "../../layers/git/GitMemory.js"
import { SecretBox } from "../../src/common/SecretBox.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { Git } from "../../src/sync/Git.js"
import { repoKeyOf } from "../../src/sync/RepoLink.js"
import { SyncEngine } from "../../src/sync/SyncEngine.js"
import { SyncRepo } from "../../src/sync/SyncRepo.js"
import { SyncSupervisor } from "../../src/sync/SyncSupervisor.js"
import { pausingGit } from "../support/PausingGit.js"

/** Each lab's fetches (one per attempt: a push and a pull both start with one), at the virtual time they were made. */
const fetches = new Map<string, Array<number>>()
const fetchesOf = (labId: string) => fetches.get(labId) ?? []

const memory = GitMemory.layer
const counting = Layer.effect(
  Git,
  Effect.map(Git, (git) =>
    Git.of({
      ...git,
      fetch: (labId, remote) =>
        Effect.zipRight(
          Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => void fetches.set(labId, [...fetchesOf(labId), now]))),
          git.fetch(labId, remote)
        )
    })
  )
).pipe(Layer.provide(memory))
const pausing = pausingGit(counting)
const remotesLayer = Layer.effect(GitMemory.InMemoryRemotes, GitMemory.InMemoryRemotes).pipe(Layer.provide(memory))

const TestLayer = Layer.mergeAll(SyncEngine.Default, SyncRepo.Default, LabsRepo.Default).pipe(
  Layer.provideMerge(Layer.merge(pausing.layer, remotesLayer)),
  Layer.provideMerge(SecretBox.layer(Redacted.make(randomBytes(32).toString("hex")))),
  Layer.provideMerge(Database.layer({ kind: "pglite", dataDir: undefined }))
)

/** Real time passes (the database and git answer), virtual time stands still. */
const settle = TestServices.provideLive(Effect.sleep(Duration.millis(25)))

/** Wait, in real time, until `done` holds (at most 20 s). */
const until = (what: string, done: Effect.Effect<boolean>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 800; i++) {
      if (yield* done) return
      yield* settle
    }
    throw new Error(`timed out waiting until ${what}`)
  })

/** The supervisor with its own scope (closing it is the service stopping), built in the test's virtual time. */
const startSupervisor = Effect.gen(function* () {
  const scope = yield* Scope.make()
  const context = yield* Layer.buildWithScope(SyncSupervisor.DefaultWithoutDependencies, scope)
  return { supervisor: Context.get(context, SyncSupervisor), scope }
})

/** A lab with auto-push, linked to a fresh in-memory remote holding one file, and synced. */
const syncedLab = Effect.gen(function* () {
  const labs = yield* LabsRepo
  const sync = yield* SyncRepo
  const remotes = yield* GitMemory.InMemoryRemotes
  const slug = `lab-${randomBytes(4).toString("hex")}`
  const lab = yield* Effect.orDie(labs.insert({ slug, name: slug, plan: "free" }))
  const url = `https://git.example.com/team/${slug}.git`
  yield* remotes.pushFromOutside(url, "main", { "README.md": "# readme\n" })
  yield* sync.saveLink({ labId: lab.id, repo: url, repoKey: repoKeyOf(url), defaultBranch: "main", autoPush: true, token: Option.none() })
  const started = yield* startSupervisor
  yield* started.supervisor.requestPull(systemLab(lab.id))
  yield* until("the lab is synced", Effect.map(sync.link(lab.id), (l) => Option.isSome(l) && l.value.lastSyncSha !== null))
  // the start's catch-up and the request above can make two jobs: a write queued while the second runs would be
  // pushed by it (a suite run saw 201 of a test's 1,200 writes land that way), so the test starts with no job running
  yield* until("every worker has ended", Effect.map(started.supervisor.activeLabs, (n) => n === 0))
  return { labId: systemLab(lab.id), url, ...started }
})

const queueWrites = (labId: string, from: number, count: number) =>
  Effect.flatMap(SyncRepo, (sync) =>
    Effect.forEach(Array.from({ length: count }, (_, i) => from + i), (i) => sync.enqueue(labId, `/notes/n${i}.md`, `note ${i}\n`, { actor: "key_test", name: "test key" }), {
      discard: true
    })
  )

layer(TestLayer, { timeout: 120_000 })("sync worker (virtual time)", (it) => {
  it.effect("while the host is down, 120 writes in 30 s make at most one attempt per delay; once it is back they land within 5 s", () =>
    Effect.gen(function* () {
      const sync = yield* SyncRepo
      const remotes = yield* GitMemory.InMemoryRemotes
      const { labId, url, supervisor, scope } = yield* syncedLab
      yield* remotes.failNext(Number.MAX_SAFE_INTEGER)
      const down = yield* Clock.currentTimeMillis
      const before = fetchesOf(labId).length
      // a write every 250 ms for 30 s, each one telling the worker, as the files API does
      for (let i = 0; i < 120; i++) {
        yield* queueWrites(labId, i, 1)
        yield* supervisor.outboxChanged(labId)
        yield* settle
        yield* TestClock.adjust(Duration.millis(250))
      }
      const during = fetchesOf(labId).slice(before)
      const gaps = during.slice(1).map((t, i) => t - (during[i] ?? t))
      // delays of 0.5, 1, 2, then 4 s, each at least 80 % of that: at most 12 attempts fit in 30 s
      expect(during.length).toBeGreaterThanOrEqual(2)
      expect(during.length).toBeLessThanOrEqual(12)
      for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(i < 3 ? 400 * 2 ** i : 3_200)
      expect(yield* sync.pendingCount(labId)).toBe(120)
      expect(Option.map(yield* sync.link(labId), (l) => l.lastError !== null)).toEqual(Option.some(true))

      // the host is back: the next attempt (at most 4.8 s away) pushes everything
      yield* remotes.failNext(0)
      const up = yield* Clock.currentTimeMillis
      expect(up - down).toBe(30_000)
      const tried = fetchesOf(labId).length
      for (let waited = 0; fetchesOf(labId).length === tried && waited < 60_000; waited += 100) {
        yield* TestClock.adjust(Duration.millis(100))
        yield* settle
      }
      const next = fetchesOf(labId)[tried] ?? Number.POSITIVE_INFINITY
      expect(next - up).toBeLessThanOrEqual(4_800 + 100)
      // that attempt lands every pending write, with no more virtual time passing than the 100 ms step it ran in
      // (its fetch reads the clock when it runs: during that step's adjustment, at its start when the worker ran
      // just before it, or once it has ended)
      yield* until("the outbox is empty", Effect.map(sync.pendingCount(labId), (n) => n === 0))
      const landedAt = yield* Clock.currentTimeMillis
      expect(landedAt - next).toBeGreaterThanOrEqual(0)
      expect(landedAt - next).toBeLessThanOrEqual(100)
      expect(Option.map(yield* sync.link(labId), (l) => l.lastError)).toEqual(Option.some(null))
      const tree = yield* remotes.read(url, "main")
      expect(tree.get("notes/n0.md")).toBe("note 0\n")
      expect(tree.get("notes/n119.md")).toBe("note 119\n")
      yield* Scope.close(scope, Exit.void)
    }))

  it.effect("on stop, a forced sync queued behind a running push is answered 503 at once, and the push ends at its chunk", () =>
    Effect.gen(function* () {
      const sync = yield* SyncRepo
      const remotes = yield* GitMemory.InMemoryRemotes
      const { labId, url, supervisor, scope } = yield* syncedLab
      yield* queueWrites(labId, 0, 1_200)
      const pause = pausing.pauseAt("push")
      yield* supervisor.outboxChanged(labId)
      // the job holds at the push of its first chunk (500 writes); a forced sync queues behind it
      yield* Effect.promise(() => pause.reached)
      const forced = yield* Effect.fork(supervisor.syncNow(labId, Option.none()))
      yield* settle
      const stopping = yield* Effect.fork(Scope.close(scope, Exit.void))
      const answer = yield* TestServices.provideLive(Effect.timeout(Fiber.await(forced), Duration.seconds(5)))
      expect(Exit.isFailure(answer) && answer.cause._tag === "Fail" ? answer.cause.error._tag : "answered").toBe("Unavailable")
      pause.release()
      // the stop ends once the chunk in flight has landed: no waiting for the 10 s grace, no later chunk
      yield* TestServices.provideLive(Effect.timeout(Fiber.join(stopping), Duration.seconds(10)))
      expect(yield* sync.pendingCount(labId)).toBe(700)
      const tree = yield* remotes.read(url, "main")
      expect(tree.get("notes/n499.md")).toBe("note 499\n")
      expect(tree.has("notes/n500.md")).toBe(false)
    }))

  it.effect("on stop, a job that does not end by itself is cut after 10 s and its forced sync is answered 503", () =>
    Effect.gen(function* () {
      const remotes = yield* GitMemory.InMemoryRemotes
      const { labId, url, supervisor, scope } = yield* syncedLab
      yield* remotes.pushFromOutside(url, "main", { "new.md": "outside\n" })
      const pause = pausing.pauseAt("readBlob")
      // the forced sync's own pull holds at its first blob
      const forced = yield* Effect.fork(supervisor.syncNow(labId, Option.none()))
      yield* Effect.promise(() => pause.reached)
      const stopping = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* settle
      expect(Option.isNone(yield* Fiber.poll(stopping))).toBe(true)
      yield* TestClock.adjust(Duration.seconds(9))
      yield* settle
      expect(Option.isNone(yield* Fiber.poll(stopping))).toBe(true)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* TestServices.provideLive(Effect.timeout(Fiber.join(stopping), Duration.seconds(5)))
      const answer = yield* TestServices.provideLive(Effect.timeout(Fiber.await(forced), Duration.seconds(5)))
      expect(Exit.isFailure(answer) && answer.cause._tag === "Fail" ? answer.cause.error._tag : "answered").toBe("Unavailable")
      pause.release()
    }))

  it.effect("a worker with nothing to do ends, and one whose lab is gone is not retried", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { labId, supervisor, scope } = yield* syncedLab
      // the catch-up jobs of every linked lab (earlier tests' too) end, and their workers with them
      yield* until("every worker has ended", Effect.map(supervisor.activeLabs, (n) => n === 0))
      yield* Effect.orDie(sql`DELETE FROM labs WHERE id = ${labId}`)
      yield* supervisor.requestPull(labId)
      expect(yield* supervisor.activeLabs).toBe(1)
      yield* until("the worker of the deleted lab has ended", Effect.map(supervisor.activeLabs, (n) => n === 0))
      yield* TestClock.adjust(Duration.minutes(1))
      yield* settle
      expect(yield* supervisor.activeLabs).toBe(0)
      yield* Scope.close(scope, Exit.void)
    }))
})
