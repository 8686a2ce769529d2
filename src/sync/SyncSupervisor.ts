import { Cause, Deferred, Duration, Effect, Exit, FiberMap, Option, Schedule, Scheduler } from "effect"
import { ServiceUnavailable } from "../http/Errors.js"
import type { GitError } from "./Git.js"
import type { SyncResult } from "./RepoLink.js"
import { SyncEngine } from "./SyncEngine.js"
import { SyncRepo } from "./SyncRepo.js"

/** What a forced sync can end with besides its result: git failed, or the service stopped first. */
export type SyncNowError = GitError | ServiceUnavailable

interface Waiter {
  readonly subPath: Option.Option<string>
  readonly done: Deferred.Deferred<SyncResult, SyncNowError>
}

/** What a lab's worker has been asked to do since it last looked. */
interface Wanted {
  readonly pull: boolean
  readonly push: boolean
  readonly waiters: ReadonlyArray<Waiter>
}

/** A lab's state while it has a worker or a link change in progress (then it is forgotten). */
interface Lab {
  wanted: Wanted
  /** Waiters whose job is running: answered by it, or 503 when the stop cuts it. */
  joined: ReadonlyArray<Waiter>
  /** Opened by a forced sync or the stop: ends a retry wait early. */
  readonly urgent: Effect.Latch
  /** Held by each git job and by each link change of the lab (see `exclusive`). */
  readonly lock: Effect.Semaphore
  hasWorker: boolean
  /** Link changes holding or waiting for `lock`. */
  holders: number
}

const nothing: Wanted = { pull: false, push: false, waiters: [] }

const isWanted = (w: Wanted) => w.pull || w.push || w.waiters.length > 0

/**
 * Retry delays after a failed job: 0.5 s doubling, capped at 4 s, each ±20 % (so at most 4.8 s). While the host is
 * down a lab makes one attempt per delay whatever the write traffic; once it is back, its writes land within one
 * delay (README: "Auto-push"). The cap is small on purpose: an attempt is one request to the host.
 */
export const retrySchedule = Schedule.exponential(Duration.millis(500)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(4))),
  Schedule.jittered
)

/** How long a stop lets the jobs in progress run on before cutting them (README: "Workers"). */
export const STOP_GRACE = Duration.seconds(10)

/**
 * The scheduler of the git jobs: each step the job's fibers take goes through setImmediate, after the event loop
 * has polled for I/O. Effect's default scheduler chains steps as microtasks and lets I/O in only every 2,048 of
 * them, so a pull's CPU work held requests (a webhook's acknowledgement) for hundreds of milliseconds.
 */
const yieldingToRequests = Scheduler.make((task) => setImmediate(task))

/** Git jobs running at once across all labs: bounds memory and CPU on big repositories. */
const CONCURRENT_JOBS = 2

const stopped = () => new ServiceUnavailable({ message: "the service is stopping; retry the sync in a few seconds" })

/**
 * A worker fiber per lab with git work to do owns that work, so pulls and pushes never race. Requests only set flags
 * (and start the worker if none runs): a burst of webhooks becomes one pull of the newest head. A failed job is
 * recorded in the sync status and retried on `retrySchedule`; a worker with nothing left to do, or whose lab is no
 * longer linked, ends. On shutdown waiting forced syncs are answered 503, the jobs in progress stop at their next
 * chunk, and after STOP_GRACE they are cut.
 */
export class SyncSupervisor extends Effect.Service<SyncSupervisor>()("SyncSupervisor", {
  dependencies: [SyncEngine.Default, SyncRepo.Default],
  scoped: Effect.gen(function* () {
    const engine = yield* SyncEngine
    const repo = yield* SyncRepo
    const jobs = yield* Effect.makeSemaphore(CONCURRENT_JOBS)
    const labs = new Map<string, Lab>()
    let stopping = false
    const isStopping = Effect.sync(() => stopping)
    const workers = yield* FiberMap.make<string>()
    const runWorker = yield* FiberMap.runtime(workers)<never>()

    const labOf = (labId: string): Lab => {
      const existing = labs.get(labId)
      if (existing) return existing
      const lab: Lab = {
        wanted: nothing,
        joined: [],
        urgent: Effect.unsafeMakeLatch(false),
        lock: Effect.unsafeMakeSemaphore(1),
        hasWorker: false,
        holders: 0
      }
      labs.set(labId, lab)
      return lab
    }

    const forgetIfUnused = (labId: string, lab: Lab) => {
      if (!lab.hasWorker && lab.holders === 0 && labs.get(labId) === lab) labs.delete(labId)
    }

    const answerAll = (waiters: ReadonlyArray<Waiter>, exit: Exit.Exit<SyncResult, SyncNowError>) =>
      Effect.forEach(waiters, (w) => Deferred.done(w.done, exit), { discard: true })

    /** The job: push the outbox (stopping at a chunk boundary on shutdown), then the pulls asked for. */
    const runJob = (labId: string, lab: Lab, wanted: Wanted) =>
      Effect.gen(function* () {
        if (stopping) return
        yield* engine.push(labId, isStopping)
        if (stopping) return yield* answerAll(wanted.waiters, Exit.fail(stopped()))
        const full = wanted.waiters.filter((w) => Option.isNone(w.subPath))
        if (wanted.pull || full.length > 0) {
          const result = yield* engine.pull(labId, Option.none(), full.length > 0)
          yield* answerAll(full, Exit.succeed(result))
        }
        for (const w of wanted.waiters) {
          if (Option.isSome(w.subPath)) yield* Deferred.complete(w.done, engine.pull(labId, w.subPath, true))
        }
      }).pipe(lab.lock.withPermits(1), jobs.withPermits(1))

    /** Take what is wanted; with nothing wanted (or on shutdown) the worker ends, in the same step. */
    const take = (labId: string, lab: Lab) =>
      Effect.sync((): Option.Option<Wanted> => {
        const wanted = lab.wanted
        if (stopping || !isWanted(wanted)) {
          lab.hasWorker = false
          forgetIfUnused(labId, lab)
          return Option.none()
        }
        lab.wanted = nothing
        lab.joined = wanted.waiters
        // every forced sync asked so far is served by this job
        lab.urgent.unsafeClose()
        return Option.some(wanted)
      })

    const failed = (labId: string, lab: Lab, wanted: Wanted, cause: Cause.Cause<GitError>) =>
      Effect.gen(function* () {
        const message = Cause.isFailType(cause) ? cause.error.message : "internal error in the sync worker"
        if (!Cause.isFailType(cause)) yield* Effect.logError(`sync worker of ${labId} failed`, cause)
        // forced syncs answer now; the work itself is retried later
        yield* answerAll(wanted.waiters, Exit.failCause(cause))
        if (Option.isNone(yield* repo.link(labId))) {
          // unlinked (the lab was deleted): nothing to retry; the worker ends once it has answered who still waits
          lab.wanted = { ...nothing, waiters: lab.wanted.waiters }
          return false
        }
        yield* repo.recordError(labId, message)
        const retried = lab.wanted
        lab.wanted = { ...retried, pull: retried.pull || wanted.pull || wanted.waiters.length > 0, push: true }
        yield* Effect.logWarning(`sync of ${labId} failed; retrying: ${message}`)
        return true
      })

    const work = (labId: string, lab: Lab) =>
      Effect.gen(function* () {
        const retry = yield* Schedule.driver(retrySchedule)
        for (;;) {
          const wanted = yield* take(labId, lab)
          if (Option.isNone(wanted)) return
          const exit = yield* Effect.exit(Effect.withScheduler(runJob(labId, lab, wanted.value), yieldingToRequests))
          lab.joined = []
          if (Exit.isSuccess(exit)) {
            yield* retry.reset
            continue
          }
          const retried = yield* failed(labId, lab, wanted.value, exit.cause)
          // one attempt per delay, however many writes come meanwhile; a forced sync or the stop cuts it short
          if (retried && !stopping) yield* Effect.raceFirst(Effect.ignore(retry.next(undefined)), lab.urgent.await)
        }
      })

    /** Restart the worker after a defect; on interruption (a stop cut it), its forced syncs are answered 503. */
    const supervise = (labId: string, lab: Lab): Effect.Effect<void> =>
      work(labId, lab).pipe(
        Effect.onInterrupt(() => answerAll([...lab.joined, ...lab.wanted.waiters], Exit.fail(stopped()))),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.logError(`sync worker of ${labId} crashed; restarting`, cause).pipe(
                Effect.zipRight(Effect.sleep(Duration.seconds(1))),
                Effect.zipRight(Effect.suspend(() => supervise(labId, lab)))
              )
        )
      )

    /** Record a request and make sure the lab's worker runs; false once the service is stopping. */
    const ask = (labId: string, f: (w: Wanted) => Wanted, urgent = false) =>
      Effect.sync(() => {
        if (stopping) return false
        const lab = labOf(labId)
        lab.wanted = f(lab.wanted)
        if (urgent) lab.urgent.unsafeOpen()
        if (!lab.hasWorker) {
          lab.hasWorker = true
          // interruptible whatever the fiber that built the service was (a layer is built uninterruptibly)
          runWorker(labId, Effect.interruptible(supervise(labId, lab)))
        }
        return true
      })

    /** A webhook or a new link: pull the newest head (coalesced). */
    const requestPull = (labId: string) => Effect.asVoid(ask(labId, (w) => ({ ...w, pull: true })))

    /** Writes are waiting in the outbox. */
    const outboxChanged = (labId: string) => Effect.asVoid(ask(labId, (w) => ({ ...w, push: true })))

    /** POST /sync: pull now (a subtree when given) and answer with the result, or 503 when the service stops first. */
    const syncNow = (labId: string, subPath: Option.Option<string>) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<SyncResult, SyncNowError>()
        const asked = yield* ask(labId, (w) => ({ ...w, waiters: [...w.waiters, { subPath, done }] }), true)
        if (!asked) return yield* stopped()
        return yield* Deferred.await(done)
      })

    /**
     * Run `change` (a link change: the git reset and the new link) while none of the lab's git jobs runs, and
     * none starts until it is done. It waits for a job in progress to finish; once started it is not interrupted.
     */
    const exclusive = <A, E, R>(labId: string, change: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          const lab = labOf(labId)
          lab.holders++
          return lab
        }),
        (lab) => lab.lock.withPermits(1)(Effect.uninterruptible(change)),
        (lab) =>
          Effect.sync(() => {
            lab.holders--
            forgetIfUnused(labId, lab)
          })
      )

    /** Labs with a worker or a link change in progress (a lab with nothing to do has none). */
    const activeLabs = Effect.sync(() => labs.size)

    // runs before the FiberMap's own finalizer (added first), which interrupts what is still running
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        stopping = true
        for (const lab of labs.values()) {
          const queued = lab.wanted.waiters
          lab.wanted = { ...lab.wanted, waiters: [] }
          yield* answerAll(queued, Exit.fail(stopped()))
          lab.urgent.unsafeOpen()
        }
        // a finalizer runs uninterruptibly: the wait must be made interruptible for the timeout to end it
        yield* Effect.ignore(Effect.timeout(Effect.interruptible(FiberMap.awaitEmpty(workers)), STOP_GRACE))
      })
    )

    // every linked lab catches up at start: deliveries missed while down, writes not yet pushed
    for (const labId of yield* repo.linkedLabIds) yield* ask(labId, () => ({ pull: true, push: true, waiters: [] }))

    return { requestPull, outboxChanged, syncNow, exclusive, activeLabs }
  })
}) {}
