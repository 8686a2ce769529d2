/**
 * How often a busy lab's worker pushes (README: "Auto-push"). Pushing each write as it comes kept a busy lab's branch
 * moving several times a second, and a person pushing from their own machine (pull, rebase, push: a few seconds over
 * a real connection) lost nearly every race. A lab may push PUSH_BURST times at once, then once per
 * PUSH_SPACING_MILLIS: the writes made meanwhile wait in the outbox and go together, each still its own commit, in the
 * next push. Between two pushes the branch stays put, and an outside push refused because of one of them gets
 * through on its next try.
 *
 * A token bucket per lab. Not Effect's RateLimiter: that one takes its permit before the work and lives in a scope;
 * here only a push that landed spends a turn, and a lab's bucket outlives its worker (a worker ends whenever the lab
 * has nothing to do, which between two writes a second apart it often has).
 */

/** Pushes a lab may make in a row after a quiet spell (a few writes a minute never wait). */
export const PUSH_BURST = 3
/** After the burst, at most one push per this many milliseconds (the branch is free in between). */
export const PUSH_SPACING_MILLIS = 5_000

interface Bucket {
  /** Pushes the lab may start now (fractions accrue with time). */
  tokens: number
  /** When `tokens` was last brought up to date (ms since the epoch). */
  at: number
}

/** Every lab's push turns (the labs that pushed lately: a full bucket is forgotten). */
export class PushTurns {
  private readonly buckets = new Map<string, Bucket>()

  private readonly refill = (labId: string, now: number): Bucket => {
    const bucket = this.buckets.get(labId) ?? { tokens: PUSH_BURST, at: now }
    bucket.tokens = Math.min(PUSH_BURST, bucket.tokens + Math.max(0, now - bucket.at) / PUSH_SPACING_MILLIS)
    bucket.at = now
    return bucket
  }

  /** Milliseconds before the lab's next push may start (0: now). */
  readonly delay = (labId: string, now: number = Date.now()): number => {
    const bucket = this.refill(labId, now)
    return bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) * PUSH_SPACING_MILLIS)
  }

  /** A push of the lab's landed. */
  readonly spend = (labId: string, now: number = Date.now()) => {
    const bucket = this.refill(labId, now)
    bucket.tokens = Math.max(0, bucket.tokens - 1)
    this.buckets.set(labId, bucket)
    // labs quiet long enough to have their whole burst back are forgotten, so the map holds only busy labs
    for (const [id, other] of this.buckets) if (now - other.at >= PUSH_BURST * PUSH_SPACING_MILLIS) this.buckets.delete(id)
  }
}
