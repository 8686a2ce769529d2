import { Clock, Deferred, Effect, Exit, Option } from "effect"
import { GitError } from "./Git.js"
import type { LabId } from "../labs/LabId.js"
import { inGoodSlot } from "./SlotLease.js"
import { answerAll, type Lab, stopped, type Supervision, type Wanted } from "./SupervisorState.js"

/** One job of a lab's worker (SyncSupervisor.ts): the host checked, a job slot taken, the lab's git work run. */

/**
 * The job: push the outbox (stopping at a chunk boundary on shutdown; not when `pushNow` is false: the lab's push turn
 * has not come), then the pulls asked for. "busy" when another replica works on the lab now: nothing was done, and
 * the job is asked again shortly.
 */
export const runJob = (s: Supervision, labId: LabId, lab: Lab, wanted: Wanted, pushNow: boolean): Effect.Effect<"done" | "busy", GitError> =>
  Effect.gen(function* () {
    if (s.stopping) return
    if (pushNow && (yield* s.engine.push(labId, s.isStopping)) > 0) s.pushTurns.spend(labId)
    if (s.stopping) return yield* answerAll(wanted.waiters, Exit.fail(stopped()))
    const full = wanted.waiters.filter((w) => Option.isNone(w.subPath))
    if (wanted.pull || full.length > 0) {
      // read before the fetch: this pull sees the remote as it was when the request on record was made, or later
      const asked = yield* s.repo.pullWanted(labId)
      const result = yield* s.engine.pull(labId, Option.none(), full.length > 0)
      if (Option.isSome(asked)) yield* s.repo.pullDone(labId, asked.value)
      yield* answerAll(full, Exit.succeed(result))
    }
    for (const w of wanted.waiters) {
      if (Option.isSome(w.subPath)) yield* Deferred.complete(w.done, s.engine.pull(labId, w.subPath, true))
    }
  }).pipe(
    (job) => s.locks.tryExclusive(labId, job),
    Effect.as("done" as const),
    Effect.catchTags({
      LockBusy: () => Effect.succeed("busy" as const),
      LockUnavailable: (e) => Effect.fail(new GitError({ message: e.message }))
    }),
    lab.lock.withPermits(1),
    // a lab in good standing holds its slot while it works or its host keeps up (SlotLease.ts); a failing lab's holds it
    (job) => (lab.failing ? s.slots.retryJobs.withPermits(1)(job) : inGoodSlot(s.slots, job)),
    // the host answers first, or the job fails without having held a job slot (JobSlots.ts); someone waiting on a
    // forced sync is not queued behind failing labs' probes
    (job) => Effect.zipRight(probe(s, labId, lab, wanted), job)
  )

/** A host that answered this recently is not asked again before a job (a lab busy on another replica asks often). */
const PROBE_FRESH_MILLIS = 10_000

/** Check that the lab's host answers, holding a probe slot only (unless it answered a moment ago). */
const probe = (s: Supervision, labId: LabId, lab: Lab, wanted: Wanted) =>
  Effect.gen(function* () {
    if ((yield* Clock.currentTimeMillis) - lab.answeredAt < PROBE_FRESH_MILLIS) return
    const pool = lab.failing && wanted.waiters.length === 0 ? s.slots.retryProbes : s.slots.probes
    yield* pool.withPermits(1)(s.engine.probe(labId))
    lab.answeredAt = yield* Clock.currentTimeMillis
  })
