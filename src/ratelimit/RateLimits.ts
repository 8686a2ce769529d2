import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Cause, Clock, Context, Duration, Effect, Option } from "effect"
import type { Plan } from "../common/Schemas.js"

export interface Limits {
  readonly perMinute: number
  readonly perDay: number
}

/** Spec section 8. */
export const PLAN_LIMITS: Record<Plan, Limits> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 50_000 },
  team: { perMinute: 1_000, perDay: 500_000 }
}

/** The operator's credential has limits of its own (RATE_LIMIT_ADMIN_PER_MINUTE / _PER_DAY). */
export class AdminLimits extends Context.Tag("AdminLimits")<AdminLimits, Limits>() {}

/** The outcome for one request, for the window that binds. */
export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds when the binding window resets. */
  readonly reset: number
  /** Whole seconds to wait, when not allowed. */
  readonly retryAfter: number
}

/**
 * One window's outcome. `end` is Unix milliseconds when the window ends: the
 * stores (layers/RateLimitStore.ts) count in calendar windows aligned on the
 * Unix epoch, and answer the time left until the window's end.
 */
type WindowResult = { readonly allowed: boolean; readonly limit: number; readonly remaining: number; readonly end: number }

/**
 * A store that can count at once, without a round trip: the memory store
 * (layers/RateLimitStore.ts) offers it beside its RateLimiterStore face, over
 * the same counters. Answers `[count, ttl]` as the store's `fixedWindow` does
 * for `tokens` (default 1) in the calendar window of `windowMillis` that `now` falls in.
 */
export class FixedWindowCounter extends Context.Tag("FixedWindowCounter")<
  FixedWindowCounter,
  {
    readonly fixedWindow: (
      key: string,
      limit: number,
      windowMillis: number,
      now: number,
      tokens?: number
    ) => readonly [count: number, ttl: number]
  }
>() {}

export const MINUTE_MILLIS = 60_000
const DAY_MILLIS = 86_400_000

/** Count tokens in this key's window of this length (a calendar window: see layers/RateLimitStore.ts). */
const countViaLimiter = (
  limiter: RateLimiter.RateLimiter,
  key: string,
  limit: number,
  lengthMillis: number,
  tokens: number
): Effect.Effect<RateDecision> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    limiter
      .consume({ key, limit, window: Duration.millis(lengthMillis), algorithm: "fixed-window", onExceeded: "fail", tokens })
      .pipe(
        // the store measured the time left a moment after `now`: now + left is the window's end, or a hair before it
        Effect.map((r): WindowResult => ({ allowed: true, limit, remaining: r.remaining, end: now + Duration.toMillis(r.resetAfter) })),
        Effect.catchTag("RateLimiterError", (e) =>
          e.reason === "Exceeded"
            ? Effect.succeed<WindowResult>({ allowed: false, limit, remaining: 0, end: now + Duration.toMillis(e.retryAfter) })
            : // A broken store must not take the API down: let the request through, and say so in the log.
              Effect.as(Effect.logWarning("rate limit store failed; request allowed", { reason: reasonOf(e) }), {
                allowed: true,
                limit,
                remaining: limit,
                end: windowEnd(now, lengthMillis)
              })
        ),
        Effect.map((w) => decision(w, now))
      )
  )

/** As the limiter would count it, at once; undefined when the store cannot (a limit or window it does not size). */
const atOnce = (
  counter: FixedWindowCounter["Type"],
  key: string,
  limit: number,
  length: number,
  tokens: number,
  now: number
): RateDecision | undefined => {
  // as the RateLimiter sizes it: window / limit per token, times the limit
  const windowMillis = Math.round((length / limit) * limit)
  if (limit < 1 || !Number.isSafeInteger(windowMillis) || windowMillis < 1) return undefined
  const [used, ttl] = counter.fixedWindow(key, limit, windowMillis, now, tokens)
  const allowed = used <= limit
  return decision({ allowed, limit, remaining: allowed ? limit - used : 0, end: now + ttl }, now)
}

/** Counts requests per account in a per-minute and a per-day window, and anything else in windows of its own. */
export class RateLimits extends Effect.Service<RateLimits>()("RateLimits", {
  effect: Effect.gen(function* () {
    const limiter = yield* RateLimiter.RateLimiter
    const viaLimiter = (key: string, limit: number, lengthMillis: number, tokens: number) =>
      countViaLimiter(limiter, key, limit, lengthMillis, tokens)

    const bothViaLimiter = (account: string, limits: Limits) =>
      Effect.gen(function* () {
        const minute = yield* viaLimiter(`${account}:minute`, limits.perMinute, MINUTE_MILLIS, 1)
        if (!minute.allowed) return minute
        const day = yield* viaLimiter(`${account}:day`, limits.perDay, DAY_MILLIS, 1)
        if (!day.allowed) return day
        return binding(minute, day)
      })

    // Every request passes here: with a counter that answers at once, count in place of the RateLimiter's round of effects.
    const counter = Option.getOrUndefined(yield* Effect.serviceOption(FixedWindowCounter))

    /** One request of this account, in its minute's and its day's window. */
    const consume = (account: string, limits: Limits): Effect.Effect<RateDecision> =>
      counter === undefined
        ? bothViaLimiter(account, limits)
        : Effect.clockWith((clock) => {
            const now = clock.unsafeCurrentTimeMillis()
            const minute = atOnce(counter, `${account}:minute`, limits.perMinute, MINUTE_MILLIS, 1, now)
            if (minute === undefined) return bothViaLimiter(account, limits)
            if (!minute.allowed) return Effect.succeed(minute)
            const day = atOnce(counter, `${account}:day`, limits.perDay, DAY_MILLIS, 1, now)
            if (day === undefined) return bothViaLimiter(account, limits)
            return Effect.succeed(day.allowed ? binding(minute, day) : day)
          })

    /**
     * Count `tokens` (default 1) in this key's calendar window of `lengthMillis`.
     * With 0 tokens it only looks: `remaining` says how many are left.
     */
    const count = (key: string, limit: number, lengthMillis: number, tokens = 1): Effect.Effect<RateDecision> =>
      counter === undefined
        ? viaLimiter(key, limit, lengthMillis, tokens)
        : Effect.clockWith((clock) => {
            const answer = atOnce(counter, key, limit, lengthMillis, tokens, clock.unsafeCurrentTimeMillis())
            return answer ? Effect.succeed(answer) : viaLimiter(key, limit, lengthMillis, tokens)
          })

    return { consume, count }
  })
}) {}

/** The window that binds is the one closer to its limit (the minute's on a tie). */
const binding = (minute: RateDecision, day: RateDecision) => (day.remaining < minute.remaining ? day : minute)

/**
 * Of the windows a request was counted in, the one that binds: the first that
 * refused it, else the one with the fewest requests left (the earlier on a tie).
 */
export const bindingWindow = (first: RateDecision, others: ReadonlyArray<RateDecision>): RateDecision => {
  let bound = first
  for (const other of others) {
    if (!bound.allowed) return bound
    if (!other.allowed || other.remaining < bound.remaining) bound = other
  }
  return bound
}

/** The end of the calendar window of this length that `now` falls in (Unix ms). */
const windowEnd = (now: number, length: number) => (Math.floor(now / length) + 1) * length

const decision = (w: WindowResult, now: number): RateDecision => ({
  allowed: w.allowed,
  limit: w.limit,
  remaining: w.remaining,
  // windows end on whole seconds; rounding up also absorbs the moment between `now` and the store's reading
  reset: Math.ceil(w.end / 1000),
  retryAfter: w.allowed ? 0 : Math.max(1, Math.ceil((w.end - now) / 1000))
})

/** What went wrong, in words: the error's own message, down its chain of causes (an Error logs as `{}`). */
export const reasonOf = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (Cause.isCause(current)) current = Cause.squash(current)
    const message = current instanceof Error ? current.message : typeof current === "string" ? current : ""
    if (message !== "" && !parts.includes(message)) parts.push(message)
    current = typeof current === "object" && current !== null && "cause" in current ? current.cause : undefined
  }
  return parts.length > 0 ? parts.join(": ") : String(error)
}
