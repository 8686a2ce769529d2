import type * as RateLimiter from "@effect/experimental/RateLimiter"
import { type Context, Effect, Runtime, Schedule, type Scope } from "effect"
import type { Redis } from "ioredis"
import { reasonOf } from "../src/ratelimit/RateLimits.js"

type Store = Context.Tag.Service<RateLimiter.RateLimiterStore>

/** The Redis store and the client under it, whose connection events this breaker watches. */
export interface RedisStore {
  readonly store: Store
  readonly client: Redis
}

/** How often a Redis known to be away is tried again (RATE_LIMIT_REDIS_RETRY_MS). */
export const DEFAULT_REDIS_RETRY_MILLIS = 2_000

/**
 * A circuit breaker in front of the Redis store. Redis is known to be away after a command fails or the client
 * reports its connection failed or closed; from then on every request is counted at once in this replica's memory
 * (`memory`, the same calendar windows: each replica enforces the whole limit on its own), and a background probe
 * PINGs Redis every `retryMillis` until it answers, when counting goes back to Redis. Counts made in memory meanwhile
 * stay there. One warning with the reason when Redis goes away, one line when it is back.
 */
export const withMemoryFallback = (
  redis: RedisStore,
  memory: Store,
  retryMillis: number
): Effect.Effect<Store, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    /** Why Redis is taken to be away; undefined while it answers. */
    let away: string | undefined
    /** The client's last connection error, which says more than a command's timeout. */
    let lastConnectionError: string | undefined
    let stopping = false

    const goneAway = (reason: string) =>
      Effect.suspend(() => {
        if (away !== undefined || stopping) return Effect.void
        away = lastConnectionError === undefined || reason.includes(lastConnectionError) ? reason : `${reason} (${lastConnectionError})`
        return Effect.logWarning("rate limits: Redis is unavailable; counting in this replica's memory until it answers again", {
          reason: away,
          retry_ms: retryMillis
        })
      })
    const back = Effect.suspend(() => {
      if (away === undefined) return Effect.void
      away = undefined
      lastConnectionError = undefined
      return Effect.logInfo("rate limits: Redis answers again; counting there")
    })

    const runSync = Runtime.runSync(runtime)
    const onError = (error: unknown) => {
      lastConnectionError = reasonOf(error)
      runSync(goneAway(lastConnectionError))
    }
    const onClose = () => runSync(goneAway("the connection to Redis closed"))
    redis.client.on("error", onError)
    redis.client.on("close", onClose)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopping = true
        redis.client.off("close", onClose)
      })
    )

    const probe = Effect.suspend(() =>
      away === undefined
        ? Effect.void
        : Effect.tryPromise(() => redis.client.ping()).pipe(Effect.matchEffect({ onFailure: () => Effect.void, onSuccess: () => back }))
    )
    yield* Effect.forkScoped(Effect.repeat(probe, Schedule.spaced(retryMillis)))

    const fixedWindow: Store["fixedWindow"] = (request) =>
      away !== undefined
        ? memory.fixedWindow(request)
        : redis.store.fixedWindow(request).pipe(
            Effect.catchAll((error) =>
              // a request the store cannot size fails the same in memory; a store error with a cause is Redis failing
              error.reason === "StoreError" && error.cause !== undefined
                ? Effect.zipRight(goneAway(reasonOf(error.cause)), memory.fixedWindow(request))
                : Effect.fail(error)
            )
          )
    return { fixedWindow, tokenBucket: memory.tokenBucket }
  })
