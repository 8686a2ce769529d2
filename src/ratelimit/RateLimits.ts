import { RateLimiter } from "@effect/experimental"
import { Context, Duration, Effect } from "effect"
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

const unixSeconds = (afterMillis: number) => Math.ceil((Date.now() + afterMillis) / 1000)

/**
 * The limiter extends a counter's expiry by window/limit ms per request, and
 * the Redis store sets that expiry with PX, which takes whole milliseconds
 * only: a fractional share (team per day: 172.8 ms, admin per day at 10M:
 * 8.64 ms) fails every time, and the window goes unenforced. Round the share
 * up to whole milliseconds (team's day becomes 24 h 1 min 40 s).
 */
const storeWindow = (window: Duration.Duration, limit: number): Duration.Duration =>
  Duration.millis(Math.max(1, Math.ceil(Duration.toMillis(window) / limit)) * limit)

type WindowResult = { readonly allowed: boolean; readonly limit: number; readonly remaining: number; readonly resetMillis: number }

/** Counts requests per account in a per-minute and a per-day window. */
export class RateLimits extends Effect.Service<RateLimits>()("RateLimits", {
  effect: Effect.gen(function* () {
    const limiter = yield* RateLimiter.RateLimiter

    const window = (key: string, limit: number, window: Duration.Duration) =>
      limiter.consume({ key, limit, window: storeWindow(window, limit), algorithm: "fixed-window", onExceeded: "fail" }).pipe(
        Effect.map(
          (r): WindowResult => ({ allowed: true, limit, remaining: r.remaining, resetMillis: Duration.toMillis(r.resetAfter) })
        ),
        Effect.catchTag("RateLimiterError", (e) =>
          e.reason === "Exceeded"
            ? Effect.succeed<WindowResult>({ allowed: false, limit, remaining: 0, resetMillis: Duration.toMillis(e.retryAfter) })
            : // A broken store must not take the API down: let the request through, and say so in the log.
              Effect.as(Effect.logWarning("rate limit store failed; request allowed", e), {
                allowed: true,
                limit,
                remaining: limit,
                resetMillis: Duration.toMillis(window)
              })
        )
      )

    const consume = (account: string, limits: Limits) =>
      Effect.gen(function* () {
        const minute = yield* window(`${account}:minute`, limits.perMinute, Duration.minutes(1))
        if (!minute.allowed) return decision(minute)
        const day = yield* window(`${account}:day`, limits.perDay, Duration.days(1))
        if (!day.allowed) return decision(day)
        // The window that binds is the one closer to its limit.
        return decision(day.remaining < minute.remaining ? day : minute)
      })

    return { consume }
  })
}) {}

const decision = (w: WindowResult): RateDecision => ({
  allowed: w.allowed,
  limit: w.limit,
  remaining: w.remaining,
  reset: unixSeconds(w.resetMillis),
  retryAfter: w.allowed ? 0 : Math.max(1, Math.ceil(w.resetMillis / 1000))
})
