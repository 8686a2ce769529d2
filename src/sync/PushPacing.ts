/**
 * How often a busy lab's worker pushes (README: "Auto-push"). Pushing each write as it comes kept a busy lab's branch
 * moving ten times a second, and a person pushing from their own machine (fetch, rebase, push: a second or so) lost
 * nearly every race. A lab may push PUSH_BURST times at once, then once per PUSH_SPACING_MILLIS: the writes made
 * meanwhile wait in the outbox and go together, each still its own commit, in the next push. Between two pushes the
 * branch stays put, and an outside push rejected by one of them gets through on its next try.
 *
 * A token bucket per lab, kept in the supervisor's state (Effect's RateLimiter takes its permit before the work and
 * is scoped; here only a push that landed spends one, and the state lives and dies with the lab's entry).
 */

/** Pushes a lab may make in a row after a quiet spell (a few writes a minute never wait). */
export const PUSH_BURST = 3
/** After the burst, at most one push per this many milliseconds (the branch is free in between). */
export const PUSH_SPACING_MILLIS = 5_000

export interface PushPacing {
  /** Pushes the lab may start now (fractions accrue with time). */
  tokens: number
  /** When `tokens` was last brought up to date (ms since the epoch). */
  at: number
}

export const makePacing = (now: number = Date.now()): PushPacing => ({ tokens: PUSH_BURST, at: now })

const refill = (pacing: PushPacing, now: number) => {
  pacing.tokens = Math.min(PUSH_BURST, pacing.tokens + Math.max(0, now - pacing.at) / PUSH_SPACING_MILLIS)
  pacing.at = now
}

/** Milliseconds before the lab's next push may start (0: now). */
export const delayBeforePush = (pacing: PushPacing, now: number = Date.now()): number => {
  refill(pacing, now)
  return pacing.tokens >= 1 ? 0 : Math.ceil((1 - pacing.tokens) * PUSH_SPACING_MILLIS)
}

/** A job pushed (at least one write landed). */
export const spendPush = (pacing: PushPacing, now: number = Date.now()) => {
  refill(pacing, now)
  pacing.tokens = Math.max(0, pacing.tokens - 1)
}
