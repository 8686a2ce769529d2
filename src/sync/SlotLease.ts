import { Duration, Effect } from "effect"
import { type ExchangeMeter, HostMeter } from "./Git.js"
import type { Slots } from "./JobSlots.js"

/**
 * A job of a lab in good standing holds a slot of the good pool only while it works or its host keeps up (README
 * "Slow or dead git hosts"). A host can answer the probe at once and then stall the pack: never answer it, or
 * trickle a byte just under the idle limit. So while other labs wait for a slot, a job that has waited on its host
 * for GIT_SLOT_STALL_MS with less than PROGRESS_BYTES moved gives its slot up ("parks") and goes on waiting holding
 * none. It takes a slot again, queued as any job, before it handles more than PROGRESS_BYTES of what the host sends
 * or goes on past the exchange's end; the bytes wait meanwhile (TCP holds the host back). Nothing fails: a host
 * that is only slow to start (a big pack being prepared, a push being checked) costs its lab a place in the queue,
 * a dead one times out under the phase limits as before; a pack streaming fast is never parked however long it takes.
 */

/** Fewer bytes than this, sent or received, in GIT_SLOT_STALL_MS is a stall: a dribble, not a transfer. */
export const PROGRESS_BYTES = 4096

/** How often a job of the good pool is looked at (to park it, or to take a slot back for it). */
const LOOK_EVERY = Duration.millis(50)

/** One job's meter: how long it has waited on its host without PROGRESS_BYTES moving, and whether it is parked. */
export class JobMeter implements ExchangeMeter {
  private open = 0
  private movedSinceMark = 0
  private markedAt = Date.now()
  private parked = false
  private movedWhileParked = 0
  private readonly waiting: Array<() => void> = []

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
    if (this.parked) this.movedWhileParked += bytes
  }

  readonly proceed = (ending: boolean) =>
    !this.parked || (!ending && this.movedWhileParked < PROGRESS_BYTES)
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.waiting.push(resolve))

  /** Waiting on the host (an exchange open) with less than PROGRESS_BYTES moved for `millis`. */
  readonly stalledFor = (millis: number) => this.open > 0 && Date.now() - this.markedAt >= millis

  /** The job gave its slot up. */
  readonly park = () => {
    this.parked = true
    this.movedWhileParked = 0
  }

  /** Parked, and something waits to go on: the job needs its slot back. */
  readonly wantsSlot = () => this.parked && this.waiting.length > 0

  /** The job holds its slot again (or has ended): what waited goes on. */
  readonly resume = () => {
    this.parked = false
    this.mark()
    for (const go of this.waiting.splice(0)) go()
  }
}

/** Run `job` under a slot of the good pool, under the lease above. */
export const inGoodSlot = <A, E, R>(slots: Slots, job: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const meter = new JobMeter()
    let held = false
    // counted while waiting: a job parks only while another waits
    const take = Effect.uninterruptibleMask((restore) =>
      Effect.sync(() => slots.demand.waiting++).pipe(
        Effect.zipRight(Effect.ensuring(restore(slots.jobs.take(1)), Effect.sync(() => slots.demand.waiting--))),
        Effect.zipRight(
          Effect.sync(() => {
            held = true
            meter.resume()
          })
        )
      )
    )
    const release = Effect.suspend(() => {
      if (!held) return Effect.void
      held = false
      return slots.jobs.release(1)
    })
    // parked and released at once, so no permit is lost to an interruption between the two
    const park = Effect.uninterruptible(
      Effect.suspend(() => {
        meter.park()
        return release
      })
    )
    const lease: Effect.Effect<never> = Effect.forever(
      Effect.zipRight(
        Effect.sleep(LOOK_EVERY),
        Effect.suspend(() => {
          if (held && slots.demand.waiting > 0 && meter.stalledFor(slots.sizes.stallMillis)) return park
          return !held && meter.wantsSlot() ? take : Effect.void
        })
      )
    )
    // the job's end ends the lease; what still waits on the meter goes on (to find its exchange aborted)
    return Effect.zipRight(take, Effect.raceFirst(Effect.provideService(job, HostMeter, meter), lease)).pipe(
      Effect.ensuring(Effect.zipRight(Effect.sync(meter.resume), release))
    )
  })
