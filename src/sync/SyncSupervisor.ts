import { Cause, Clock, Deferred, Duration, Effect, Exit, FiberMap, FiberSet, Option, Schedule, Scheduler } from "effect"
import { Unavailable } from "../common/DomainErrors.js"
import { GitError } from "./Git.js"
import { makeSlots } from "./JobSlots.js"
import { runJob } from "./SupervisorJob.js"
import { exclusiveWithin, LabLocks, LockBusy, LockUnavailable } from "./LabLocks.js"
import type { SyncResult } from "./RepoLink.js"
import { type LabId, systemLab } from "../labs/LabId.js"
import { DiskSpace } from "../status/DiskSpace.js"
import { causeIsRestoring } from "../db/RestoreGate.js"
import { SyncEngine } from "./SyncEngine.js"
import { SyncRepo } from "./SyncRepo.js"
import { sweep } from "./SyncSweep.js"
import { PushTurns } from "./PushPacing.js"
import {
  answerAll,
  forgetIfUnused,
  isWanted,
  type Lab,
  labOf,
  nothing,
  requeue,
  stopped,
  type Supervision,
  type SyncNowError,
  type Wanted
} from "./SupervisorState.js"

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

/** While another replica works on a lab, its job is asked again this often (holding nothing meanwhile). */
const BUSY_AGAIN = Duration.millis(250)

/** Take what is wanted; with nothing wanted (or on shutdown) the worker ends, in the same step. */
const take = (s: Supervision, labId: LabId, lab: Lab) =>
  Effect.sync((): Option.Option<Wanted> => {
    const wanted = lab.wanted
    if (s.stopping || !isWanted(wanted)) {
      lab.hasWorker = false
      forgetIfUnused(s, labId, lab)
      return Option.none()
    }
    lab.wanted = nothing
    lab.joined = wanted.waiters
    // every forced sync asked so far is served by this job
    lab.urgent.unsafeClose()
    return Option.some(wanted)
  })

const failed = (s: Supervision, labId: LabId, lab: Lab, wanted: Wanted, cause: Cause.Cause<GitError>) =>
  Effect.gen(function* () {
    const message = Cause.isFailType(cause) ? cause.error.message : "internal error in the sync worker"
    // a lab being restored refuses the job's writes (the restore gate): not a fault, the job is retried as it is
    const restoring = causeIsRestoring(cause)
    if (!Cause.isFailType(cause) && !restoring) yield* Effect.logError(`sync worker of ${labId} failed`, cause)
    // forced syncs answer now; the work itself is retried later
    yield* answerAll(wanted.waiters, Exit.failCause(cause))
    if (Option.isNone(yield* s.repo.link(labId))) {
      // unlinked (the lab was deleted): nothing to retry; the worker ends once it has answered who still waits
      lab.wanted = { ...nothing, waiters: lab.wanted.waiters }
      return false
    }
    // the sync status is the lab's too: the gate would refuse recording the error
    if (!restoring) yield* s.repo.recordError(labId, message)
    const retried = lab.wanted
    lab.wanted = { ...retried, pull: retried.pull || wanted.pull || wanted.waiters.length > 0, push: true }
    yield* restoring
      ? Effect.logInfo(`sync of ${labId} waits for the lab's restore to end; retrying`)
      : Effect.logWarning(`sync of ${labId} failed; retrying: ${message}`)
    return true
  })

/**
 * A busy lab's next push waits for its turn (PushPacing.ts), holding nothing. Only a push waits: a pull asked for (a
 * webhook, most often the outside pusher's own), a forced sync or the stop cuts the wait short, and `pushesNow` then
 * keeps the push for its turn.
 */
const pushTurn = (s: Supervision, labId: LabId, lab: Lab) =>
  Effect.suspend(() => {
    const w = lab.wanted
    const wait = !s.stopping && w.push && !w.pull && w.waiters.length === 0 ? s.pushTurns.delay(labId) : 0
    if (wait === 0) return Effect.void
    // closed in the same step as `wanted` was read: a pull asked from now on opens it
    lab.pullAsked.unsafeClose()
    return Effect.raceAll([Effect.sleep(Duration.millis(wait)), lab.urgent.await, lab.pullAsked.await])
  })

/**
 * Whether the job just taken pushes: not before the lab's push turn, unless a forced sync or the stop asks for
 * everything now. A push it leaves stays wanted, for the worker to run at its turn.
 */
const pushesNow = (s: Supervision, labId: LabId, lab: Lab, wanted: Wanted) => {
  if (s.stopping || wanted.waiters.length > 0 || s.pushTurns.delay(labId) === 0) return true
  if (wanted.push) lab.wanted = { ...lab.wanted, push: true }
  return false
}

const work = (s: Supervision, labId: LabId, lab: Lab) =>
  Effect.gen(function* () {
    const retry = yield* Schedule.driver(retrySchedule)
    for (;;) {
      yield* pushTurn(s, labId, lab)
      const wanted = yield* take(s, labId, lab)
      if (Option.isNone(wanted)) return
      const pushNow = pushesNow(s, labId, lab, wanted.value)
      const exit = yield* Effect.exit(Effect.withScheduler(runJob(s, labId, lab, wanted.value, pushNow), yieldingToRequests))
      lab.joined = []
      if (Exit.isSuccess(exit) && exit.value === "busy") {
        yield* requeue(s, lab, wanted.value)
        yield* Effect.sleep(BUSY_AGAIN)
        continue
      }
      lab.failing = Exit.isFailure(exit)
      if (Exit.isSuccess(exit)) {
        lab.answeredAt = yield* Clock.currentTimeMillis
        yield* retry.reset
        continue
      }
      const retried = yield* failed(s, labId, lab, wanted.value, exit.cause)
      // one attempt per delay, however many writes come meanwhile; a forced sync or the stop cuts it short
      if (retried && !s.stopping) yield* Effect.raceFirst(Effect.ignore(retry.next(undefined)), lab.urgent.await)
    }
  })

/** Restart the worker after a defect; on interruption (a stop cut it), its forced syncs are answered 503. */
const supervise = (s: Supervision, labId: LabId, lab: Lab): Effect.Effect<void> =>
  work(s, labId, lab).pipe(
    Effect.onInterrupt(() => answerAll([...lab.joined, ...lab.wanted.waiters], Exit.fail(stopped()))),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.logError(`sync worker of ${labId} crashed; restarting`, cause).pipe(
            Effect.zipRight(Effect.sleep(Duration.seconds(1))),
            Effect.zipRight(Effect.suspend(() => supervise(s, labId, lab)))
          )
    )
  )

/** Record a request and make sure the lab's worker runs; false once the service is stopping. */
const ask = (s: Supervision, labId: LabId, f: (w: Wanted) => Wanted, urgent = false) =>
  Effect.sync(() => {
    if (s.stopping) return false
    const lab = labOf(s, labId)
    lab.wanted = f(lab.wanted)
    if (urgent) lab.urgent.unsafeOpen()
    if (lab.wanted.pull) lab.pullAsked.unsafeOpen()
    if (!lab.hasWorker) {
      lab.hasWorker = true
      // interruptible whatever the fiber that built the service was (a layer is built uninterruptibly)
      s.runWorker(labId, Effect.interruptible(supervise(s, labId, lab)))
    }
    return true
  })

/** POST /sync: pull now (a subtree when given) and answer with the result, or 503 when the service stops first. */
const syncNow = (s: Supervision, labId: LabId, subPath: Option.Option<string>) =>
  Effect.gen(function* () {
    const done = yield* Deferred.make<SyncResult, SyncNowError>()
    const asked = yield* ask(s, labId, (w) => ({ ...w, waiters: [...w.waiters, { subPath, done }] }), true)
    if (!asked) return yield* stopped()
    return yield* Deferred.await(done)
  })

/** How long a link change waits for a job another replica runs on the lab (each fetch or push ends within GIT_TIMEOUT_MS, 60 s by default). */
const LINK_CHANGE_WAIT = Duration.seconds(90)

/**
 * Run `change` (a link change: the git reset and the new link) while none of the lab's git jobs runs, and
 * none starts until it is done. It waits for a job in progress to finish; once started it is not interrupted.
 */
const exclusive = <A, E, R>(s: Supervision, labId: LabId, change: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const lab = labOf(s, labId)
      lab.holders++
      return lab
    }),
    (lab) =>
      lab.lock.withPermits(1)(
        exclusiveWithin(s.locks, labId, Effect.uninterruptible(change), LINK_CHANGE_WAIT).pipe(
          Effect.catchIf(
            (e): e is LockBusy | LockUnavailable => e instanceof LockBusy || e instanceof LockUnavailable,
            (e) =>
              Effect.fail(
                new Unavailable({
                  reason:
                    e instanceof LockBusy
                      ? "another replica is syncing the lab; nothing was changed: retry in a few seconds"
                      : e.busy
                        ? "the database is busy (every connection stayed in use); nothing was changed: retry"
                        : "the database is unavailable; nothing was changed: retry"
                })
              )
          )
        )
      ),
    (lab) =>
      Effect.sync(() => {
        lab.holders--
        forgetIfUnused(s, labId, lab)
      })
  )

/** The stop: waiting forced syncs answered 503, retry waits ended, the workers given STOP_GRACE to end. */
const stop = (s: Supervision, workers: FiberMap.FiberMap<LabId>) =>
  Effect.gen(function* () {
    s.stopping = true
    for (const lab of s.labs.values()) {
      const queued = lab.wanted.waiters
      lab.wanted = { ...lab.wanted, waiters: [] }
      yield* answerAll(queued, Exit.fail(stopped()))
      lab.urgent.unsafeOpen()
    }
    // a finalizer runs uninterruptibly: the wait must be made interruptible for the timeout to end it
    yield* Effect.ignore(Effect.timeout(Effect.interruptible(FiberMap.awaitEmpty(workers)), STOP_GRACE))
  })

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
    const repo = yield* SyncRepo
    const workers = yield* FiberMap.make<LabId>()
    // the record of a webhook's pull is written beside its acknowledgement, never before it: the write may wait
    // for the database (the embedded one runs one statement at a time, and a pull's transaction may be open)
    const recordings = yield* FiberSet.make()
    const runWorker = yield* FiberMap.runtime(workers)<never>()
    const s: Supervision = {
      engine: yield* SyncEngine,
      locks: yield* LabLocks,
      repo,
      slots: yield* makeSlots,
      pushTurns: new PushTurns(),
      labs: new Map(),
      stopping: false,
      isStopping: Effect.sync(() => s.stopping),
      runWorker: (labId, worker) => runWorker(labId, worker)
    }
    // runs before the FiberMap's own finalizer (added first), which interrupts what is still running
    yield* Effect.addFinalizer(() => stop(s, workers))
    // every linked lab catches up at start: deliveries missed while down, writes not yet pushed (the service's
    // own rows: no request involved)
    for (const labId of yield* repo.linkedLabIds) yield* ask(s, systemLab(labId), () => ({ pull: true, push: true, waiters: [] }))
    // writes a replica acknowledged and then died with are pushed by another (README "Replicas")
    yield* Effect.forkScoped(
      sweep(repo, {
        stopping: s.isStopping,
        push: (labId) => ask(s, systemLab(labId), (w) => ({ ...w, push: true })),
        pull: (labId) => ask(s, systemLab(labId), (w) => ({ ...w, pull: true }))
      })
    )

    // pulls paused while the disk was below its reserve (SyncEngine.ts) run once space returns, webhook or not
    const disk = yield* Effect.serviceOption(DiskSpace)
    if (Option.isSome(disk)) {
      yield* disk.value.onSpaceReturned(
        Effect.flatMap(repo.linkedLabIds, (labIds) =>
          Effect.forEach(labIds, (labId) => ask(s, systemLab(labId), (w) => ({ ...w, pull: true })), { discard: true })
        )
      )
    }

    return {
      /** A webhook or a new link: pull the newest head (coalesced; on record until pulled, for the replicas' sweep). */
      requestPull: (labId: LabId) =>
        Effect.zipRight(
          FiberSet.run(
            recordings,
            Effect.catchAllCause(repo.wantPull(labId), (cause) => Effect.logWarning("a pull request was not recorded", cause))
          ),
          Effect.asVoid(ask(s, labId, (w) => ({ ...w, pull: true })))
        ),
      /** Writes are waiting in the outbox (the files API's PushQueue; it checked the lab first). */
      outboxChanged: (labId: string) => Effect.asVoid(ask(s, systemLab(labId), (w) => ({ ...w, push: true }))),
      syncNow: (labId: LabId, subPath: Option.Option<string>) => syncNow(s, labId, subPath),
      exclusive: <A, E, R>(labId: LabId, change: Effect.Effect<A, E, R>) => exclusive(s, labId, change),
      /** Labs with a worker or a link change in progress (a lab with nothing to do has none). */
      activeLabs: Effect.sync(() => s.labs.size)
    }
  })
}) {}
