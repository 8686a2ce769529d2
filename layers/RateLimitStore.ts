import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Clock, Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import type { RedisOptions } from "ioredis"
import { createHash } from "node:crypto"
import { FixedWindowCounter } from "../src/ratelimit/RateLimits.js"
import { DEFAULT_REDIS_RETRY_MILLIS, type RedisStore, withMemoryFallback } from "./RedisFallback.js"

/**
 * Stores for `@effect/experimental`'s RateLimiter with calendar (fixed) windows.
 *
 * The library's own "fixed-window" stores drain: each request pushes the
 * counter's expiry out by window/limit, and the whole counter vanishes when
 * that expiry passes, so a client that pauses briefly starts over and can get
 * close to twice the limit in one window. These stores count per calendar
 * window instead:
 *
 * - the window is `refillRate * limit` long (the limiter passes
 *   refillRate = window/limit), aligned on the Unix epoch: window number
 *   floor(now / window), by Effect's Clock. A minute window runs from :00 to :00,
 *   a day window from 00:00 UTC to 00:00 UTC.
 * - the counter's key names the window number, so a new window starts at zero.
 * - `fixedWindow` answers `[count, ttl]`: the count after this request and the
 *   milliseconds until the window ends. A request that would go over the limit
 *   is answered with count > limit and is not counted.
 * - `tokenBucket` is not supported (nothing here uses it): it fails with a
 *   RateLimitStoreError.
 */

export type Store = Context.Tag.Service<RateLimiter.RateLimiterStore>

/** Where every counter lives in Redis. */
export const REDIS_PREFIX = "lab-service:ratelimit:"

/** Redis keeps a counter this long past its window's end, for replicas whose clocks run a little behind. */
export const REDIS_EXPIRY_SLACK_MILLIS = 1_000

interface CurrentWindow {
  /** The request's limit (a fixed window is sized by it, so there is one). */
  readonly limit: number
  readonly now: number
  /** floor(now / window length) */
  readonly index: number
  /** Unix milliseconds when the window ends. */
  readonly end: number
  /** Milliseconds until then. */
  readonly ttl: number
}

const storeError = (message: string, cause?: unknown) => new RateLimiter.RateLimitStoreError({ message, cause })

/** The calendar window `now` falls in; its length is refillRate × limit, rounded to whole milliseconds. */
const currentWindow = (options: {
  readonly refillRate: Duration.Duration
  readonly limit: number | undefined
}): Effect.Effect<CurrentWindow, RateLimiter.RateLimitStoreError> => {
  if (options.limit === undefined) {
    return Effect.fail(storeError(`fixed windows need a limit (use onExceeded: "fail")`))
  }
  // refillRate is window/limit and may be fractional (a day / 500000 = 172.8 ms): round the product back
  const windowMillis = Math.round(Duration.toMillis(options.refillRate) * options.limit)
  if (!Number.isSafeInteger(windowMillis) || windowMillis < 1) {
    return Effect.fail(storeError(`a fixed window must last at least 1 ms, not ${windowMillis} ms`))
  }
  const limit = options.limit
  return Effect.map(Clock.currentTimeMillis, (now) => windowAt(limit, windowMillis, now))
}

const windowAt = (limit: number, windowMillis: number, now: number): CurrentWindow => {
  const index = Math.floor(now / windowMillis)
  const end = (index + 1) * windowMillis
  return { limit, now, index, end, ttl: end - now }
}

const tokenBucketUnsupported = () =>
  Effect.fail(storeError("token-bucket is not supported by this store: it keeps fixed (calendar) windows only"))

// ---------------------------------------------------------------------------
// memory

export interface MemoryStore {
  readonly store: Store
  /** The same counters, answered at once (see FixedWindowCounter). */
  readonly counter: FixedWindowCounter["Type"]
  /** How many counters are held (the current windows' only, once a past window's end has been passed). */
  readonly size: () => number
}

/**
 * Counters in a Map keyed by key and window number. When the clock passes the
 * earliest end of a held window, every ended window's counter is dropped, so the
 * Map holds the current windows' counters (and, until the next request, those
 * that ended since the last one).
 */
export const makeMemoryStore = (): MemoryStore => {
  const counters = new Map<string, { count: number; readonly end: number }>()
  let nextEnd = Number.POSITIVE_INFINITY

  const sweep = (now: number) => {
    if (now < nextEnd) return
    nextEnd = Number.POSITIVE_INFINITY
    for (const [key, counter] of counters) {
      if (counter.end <= now) counters.delete(key)
      else if (counter.end < nextEnd) nextEnd = counter.end
    }
  }

  const count = (key: string, tokens: number, window: CurrentWindow): readonly [count: number, ttl: number] => {
    sweep(window.now)
    const counterKey = `${key}:${window.index}`
    const counter = counters.get(counterKey)
    const total = (counter?.count ?? 0) + tokens
    if (total > window.limit) return [total, window.ttl]
    if (counter) counter.count = total
    else {
      counters.set(counterKey, { count: total, end: window.end })
      if (window.end < nextEnd) nextEnd = window.end
    }
    return [total, window.ttl]
  }

  const store: Store = {
    fixedWindow: (options) => Effect.map(currentWindow(options), (window) => count(options.key, options.tokens, window)),
    tokenBucket: tokenBucketUnsupported
  }
  const counter: FixedWindowCounter["Type"] = {
    fixedWindow: (key, limit, windowMillis, now, tokens = 1) => count(key, tokens, windowAt(limit, windowMillis, now))
  }
  return { store, counter, size: () => counters.size }
}

/** Counters in this process: right for one instance. */
export const memory: Layer.Layer<RateLimiter.RateLimiterStore | FixedWindowCounter> = Layer.effectContext(
  Effect.sync(() => {
    const { store, counter } = makeMemoryStore()
    return Context.make(RateLimiter.RateLimiterStore, store).pipe(Context.add(FixedWindowCounter, counter))
  })
)

// ---------------------------------------------------------------------------
// Redis

/**
 * KEYS[1]: the window's counter; ARGV: tokens, limit, milliseconds to keep the key.
 * Counts the tokens unless that would pass the limit; answers the count with them.
 */
const FIXED_WINDOW_SCRIPT = `
local tokens = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local keepms = tonumber(ARGV[3])
local next = tonumber(redis.call("GET", KEYS[1]) or "0") + tokens
if next > limit then
  return next
end
local count = redis.call("INCRBY", KEYS[1], tokens)
redis.call("PEXPIRE", KEYS[1], keepms)
return count
`
const FIXED_WINDOW_SHA = createHash("sha1").update(FIXED_WINDOW_SCRIPT).digest("hex")


const makeRedisStore = (options: RedisOptions, prefix: string): Effect.Effect<RedisStore, never, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* Effect.acquireRelease(
      // ioredis is loaded only when Redis is configured: a single process does without its modules and their memory
      Effect.promise(() => import("ioredis")).pipe(Effect.map(({ Redis }) => new Redis(options))),
      (client) => Effect.promise(() => client.quit().then(() => undefined, () => client.disconnect()))
    )

    // EVALSHA, and EVAL the first time this Redis has not seen the script (as ioredis' defineCommand does)
    const run = (key: string, args: ReadonlyArray<number>): Promise<unknown> =>
      client
        .evalsha(FIXED_WINDOW_SHA, 1, key, ...args)
        .catch((error: unknown) =>
          error instanceof Error && error.message.startsWith("NOSCRIPT")
            ? client.eval(FIXED_WINDOW_SCRIPT, 1, key, ...args)
            : Promise.reject(error)
        )

    const store: Store = {
      fixedWindow: (request) =>
        Effect.gen(function* () {
          const window = yield* currentWindow(request)
          const reply = yield* Effect.tryPromise({
            try: () =>
              run(`${prefix}${request.key}:${window.index}`, [
                request.tokens,
                window.limit,
                Math.ceil(window.ttl) + REDIS_EXPIRY_SLACK_MILLIS
              ]),
            catch: (cause) => storeError("the fixed-window rate limit command failed in Redis", cause)
          })
          if (typeof reply !== "number") {
            return yield* Effect.fail(storeError(`unexpected reply from the fixed-window script: ${String(reply)}`))
          }
          return [reply, window.ttl] as const
        }),
      tokenBucket: tokenBucketUnsupported
    }
    return { store, client }
  })

/** ioredis options for a `redis://` or `rediss://` URL. */
const redisOptions = (url: URL): RedisOptions => ({
  host: url.hostname,
  port: url.port ? Number(url.port) : 6379,
  username: url.username ? decodeURIComponent(url.username) : undefined,
  password: url.password ? decodeURIComponent(url.password) : undefined,
  db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
  tls: url.protocol === "rediss:" ? {} : undefined,
  // fail fast when Redis is away: the fallback (RedisFallback.ts) counts in memory rather than hang requests
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  commandTimeout: 1_000
})

/** Counters in Redis under `lab-service:ratelimit:`: shared by every replica. Fails while Redis is away. */
export const redis = (url: URL): Layer.Layer<RateLimiter.RateLimiterStore> =>
  Layer.scoped(RateLimiter.RateLimiterStore, Effect.map(makeRedisStore(redisOptions(url), REDIS_PREFIX), (r) => r.store))

/**
 * Counters in Redis, and in this replica's memory while Redis is known to be away (layers/RedisFallback.ts): a
 * request never waits on a Redis that is down, and Redis is tried again in the background every `retryMillis`.
 */
export const redisWithFallback = (url: URL, retryMillis: number): Layer.Layer<RateLimiter.RateLimiterStore> =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.flatMap(makeRedisStore(redisOptions(url), REDIS_PREFIX), (redis) =>
      withMemoryFallback(redis, makeMemoryStore().store, retryMillis)
    )
  )

/** The RateLimiter over Redis when a URL is given, in memory otherwise (which also answers at once, as FixedWindowCounter). */
export const layer = (
  redisUrl: Option.Option<URL>,
  retryMillis: number = DEFAULT_REDIS_RETRY_MILLIS
): Layer.Layer<RateLimiter.RateLimiter> =>
  Option.match(redisUrl, {
    onNone: () => Layer.provideMerge(RateLimiter.layer, memory),
    onSome: (url) => RateLimiter.layer.pipe(Layer.provide(redisWithFallback(url, retryMillis)))
  })
