import { Cause, Deferred, Duration, Effect, Option, Queue, Ref, Scheduler } from "effect"
import type { GitError } from "./Git.js"
import type { SyncResult } from "./RepoLink.js"
import { SyncEngine } from "./SyncEngine.js"
import { SyncRepo } from "./SyncRepo.js"

interface Waiter {
  readonly subPath: Option.Option<string>
  readonly done: Deferred.Deferred<SyncResult, GitError>
}

/** What a lab's worker has been asked to do since it last looked. */
interface Wanted {
  readonly pull: boolean
  readonly push: boolean
  readonly waiters: ReadonlyArray<Waiter>
}

const nothing: Wanted = { pull: false, push: false, waiters: [] }

interface Worker {
  readonly wanted: Ref.Ref<Wanted>
  readonly wake: Queue.Queue<void>
  /** Held by each git job and by each link change of the lab (see `exclusive`). */
  readonly lock: Effect.Semaphore
}

/** Retry delays: 1 s doubling to 5 min, each with ±50 % jitter. */
export const backoff = (attempt: number): Duration.Duration =>
  Duration.millis(Math.min(1_000 * 2 ** Math.max(0, attempt - 1), 300_000) * (0.5 + Math.random()))

/**
 * The scheduler of the git jobs: each step the job's fibers take goes through setImmediate, after the event loop
 * has polled for I/O. Effect's default scheduler chains steps as microtasks and lets I/O in only every 2,048 of
 * them, so a pull's CPU work held requests (a webhook's acknowledgement) for hundreds of milliseconds.
 */
const yieldingToRequests = Scheduler.make((task) => setImmediate(task))

/** Git jobs running at once across all labs: bounds memory and CPU on big repositories. */
const CONCURRENT_JOBS = 2

/**
 * One worker fiber per linked lab owns all of that lab's git work, so pulls and
 * pushes never race. Requests only set flags and wake the worker: a burst of
 * webhooks becomes one pull of the newest head. Failures are recorded in the
 * sync status and retried with backoff; a crashed worker restarts; on shutdown
 * the job in progress finishes before the fiber stops.
 */
export class SyncSupervisor extends Effect.Service<SyncSupervisor>()("SyncSupervisor", {
  dependencies: [SyncEngine.Default, SyncRepo.Default],
  scoped: Effect.gen(function* () {
    const engine = yield* SyncEngine
    const repo = yield* SyncRepo
    const scope = yield* Effect.scope
    const jobs = yield* Effect.makeSemaphore(CONCURRENT_JOBS)
    const workers = new Map<string, Worker>()
    const locks = new Map<string, Effect.Semaphore>()

    // synchronous, so two callers never make two locks for one lab
    const lockOf = (labId: string) =>
      Effect.sync(() => {
        const existing = locks.get(labId)
        if (existing) return existing
        const created = Effect.unsafeMakeSemaphore(1)
        locks.set(labId, created)
        return created
      })

    const runJob = (labId: string, wanted: Wanted) =>
      Effect.gen(function* () {
        yield* engine.push(labId)
        const full = wanted.waiters.filter((w) => Option.isNone(w.subPath))
        if (wanted.pull || full.length > 0) {
          const result = yield* engine.pull(labId, Option.none(), full.length > 0)
          yield* Effect.forEach(full, (w) => Deferred.succeed(w.done, result))
        }
        for (const w of wanted.waiters) {
          if (Option.isSome(w.subPath)) yield* Deferred.complete(w.done, engine.pull(labId, w.subPath, true))
        }
      })

    const loop = (labId: string, worker: Worker) =>
      Effect.gen(function* () {
        let attempt = 0
        for (;;) {
          yield* Queue.take(worker.wake)
          const wanted = yield* Ref.getAndSet(worker.wanted, nothing)
          const job = jobs.withPermits(1)(worker.lock.withPermits(1)(runJob(labId, wanted)))
          const exit = yield* job.pipe(Effect.withScheduler(yieldingToRequests), Effect.uninterruptible, Effect.exit)
          if (exit._tag === "Success") {
            attempt = 0
            continue
          }
          attempt++
          const message = Cause.isFailType(exit.cause) ? exit.cause.error.message : "internal error in the sync worker"
          if (!Cause.isFailType(exit.cause)) yield* Effect.logError(`sync worker of ${labId} failed`, exit.cause)
          yield* repo.recordError(labId, message)
          // forced syncs answer now; the work itself is retried later
          yield* Effect.forEach(wanted.waiters, (w) => Deferred.failCause(w.done, exit.cause))
          yield* Ref.update(worker.wanted, (w) => ({ ...w, pull: w.pull || wanted.pull || wanted.waiters.length > 0, push: true }))
          const delay = backoff(attempt)
          yield* Effect.logWarning(`sync of ${labId} failed (attempt ${attempt}), retrying in ${Duration.format(delay)}: ${message}`)
          yield* Effect.forkIn(Effect.delay(Queue.offer(worker.wake, undefined), delay), scope)
        }
      })

    /** Restart the loop whatever happens to it, until the service shuts down. */
    const supervise = (labId: string, worker: Worker): Effect.Effect<never> =>
      loop(labId, worker).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.logError(`sync worker of ${labId} crashed; restarting`, cause).pipe(
                Effect.zipRight(Effect.sleep(Duration.seconds(1))),
                Effect.zipRight(Effect.suspend(() => supervise(labId, worker)))
              )
        )
      )

    const workerOf = (labId: string) =>
      Effect.gen(function* () {
        const existing = workers.get(labId)
        if (existing) return existing
        const worker: Worker = { wanted: yield* Ref.make(nothing), wake: yield* Queue.sliding<void>(1), lock: yield* lockOf(labId) }
        workers.set(labId, worker)
        yield* Effect.forkIn(supervise(labId, worker), scope)
        return worker
      })

    const ask = (labId: string, f: (w: Wanted) => Wanted) =>
      Effect.gen(function* () {
        const worker = yield* workerOf(labId)
        yield* Ref.update(worker.wanted, f)
        yield* Queue.offer(worker.wake, undefined)
      })

    /** A webhook or a new link: pull the newest head (coalesced). */
    const requestPull = (labId: string) => ask(labId, (w) => ({ ...w, pull: true }))

    /** Writes are waiting in the outbox. */
    const outboxChanged = (labId: string) => ask(labId, (w) => ({ ...w, push: true }))

    /** POST /sync: pull now (a subtree when given) and answer with the result. */
    const syncNow = (labId: string, subPath: Option.Option<string>) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<SyncResult, GitError>()
        yield* ask(labId, (w) => ({ ...w, waiters: [...w.waiters, { subPath, done }] }))
        return yield* Deferred.await(done)
      })

    /**
     * Run `change` (a link change: the git reset and the new link) while none of the lab's git jobs runs, and
     * none starts until it is done. It waits for a job in progress to finish; once started it is not interrupted.
     */
    const exclusive = <A, E, R>(labId: string, change: Effect.Effect<A, E, R>) =>
      Effect.flatMap(lockOf(labId), (lock) => lock.withPermits(1)(Effect.uninterruptible(change)))

    // every linked lab catches up at start: deliveries missed while down, writes not yet pushed
    for (const labId of yield* repo.linkedLabIds) yield* ask(labId, () => ({ pull: true, push: true, waiters: [] }))

    return { requestPull, outboxChanged, syncNow, exclusive }
  })
}) {}
