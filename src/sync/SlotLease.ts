import { Context, Duration, Effect } from "effect"
import { GitError } from "./Git.js"
import type { Slots } from "./JobSlots.js"

/**
 * A job slot of the good pool is kept while the job's host keeps up (README "Slow or dead git hosts"). A host can
 * answer the probe at once and then stall the pack (never answer it, or trickle a byte just under the idle limit):
 * its job would hold the slot for the whole GIT_TIMEOUT_MS. So while other labs wait for a slot, a job that is
 * waiting on its host and has moved less than PROGRESS_BYTES for GIT_SLOT_STALL_MS fails; its lab then retries in
 * the retry pool, under the full limits. A job that streams (a big pack arriving fast) or works locally (indexing,
 * the database) is never cut, however long it takes; nor is any job while no other lab waits.
 */

/** What one job's exchanges with its host report as they go (the transport calls it; layers/git/Transport.ts). */
export interface ExchangeMeter {
  /** An exchange begins (a request is made); the function answered marks its end (called at least once). */
  readonly begin: () => () => void
  /** Bytes moved: a request's body sent, an answer's bytes received. */
  readonly moved: (bytes: number) => void
}

const NO_METER: ExchangeMeter = { begin: () => () => {}, moved: () => {} }

/** The meter of the job the fiber runs (none outside a job of the good pool: a probe, a retry, a test). */
export class HostMeter extends Context.Reference<HostMeter>()("HostMeter", { defaultValue: () => NO_METER }) {}

/** Fewer bytes than this, sent or received, in GIT_SLOT_STALL_MS is a stall: a dribble, not a transfer. */
export const PROGRESS_BYTES = 4096

/** How often a job in the good pool is looked at. */
const LOOK_EVERY = Duration.millis(100)

export const STALLED = "the git host sent too little for too long while other labs waited for a job slot (GIT_SLOT_STALL_MS)"

/** One job's meter: since when it has been waiting on its host without PROGRESS_BYTES moving. */
export class JobMeter implements ExchangeMeter {
  private open = 0
  private movedSinceMark = 0
  private markedAt = Date.now()

  private readonly mark = () => {
    this.markedAt = Date.now()
    this.movedSinceMark = 0
  }

  readonly begin = () => {
    if (this.open++ === 0) this.mark()
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.open--
    }
  }

  readonly moved = (bytes: number) => {
    this.movedSinceMark += bytes
    if (this.movedSinceMark >= PROGRESS_BYTES) this.mark()
  }

  /** Waiting on the host (an exchange open) with less than PROGRESS_BYTES moved for `millis`. */
  readonly stalledFor = (millis: number) => this.open > 0 && Date.now() - this.markedAt >= millis
}

/**
 * Run `job` holding a slot of the good pool, under the lease above: it fails with STALLED when its host stalls while
 * another lab waits for a slot of the pool.
 */
export const inGoodSlot = <A, E, R>(slots: Slots, job: Effect.Effect<A, E, R>): Effect.Effect<A, E | GitError, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => slots.demand.jobs++),
    () =>
      slots.jobs.withPermits(1)(
        Effect.suspend(() => {
          const meter = new JobMeter()
          const contended = () => slots.demand.jobs > slots.sizes.jobs
          const lease = Effect.gen(function* () {
            for (;;) {
              yield* Effect.sleep(LOOK_EVERY)
              if (contended() && meter.stalledFor(slots.sizes.stallMillis)) return yield* new GitError({ message: STALLED })
            }
          })
          // the first to end wins: the job's end stops the lease; a stall interrupts the job (its exchanges aborted)
          return Effect.raceFirst(Effect.provideService(job, HostMeter, meter), lease)
        })
      ),
    () => Effect.sync(() => slots.demand.jobs--)
  )
