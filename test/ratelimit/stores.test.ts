import { RateLimiter } from "@effect/experimental"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Layer, TestClock } from "effect"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import * as RateLimitStore from "../../layers/RateLimitStore.js"
import { RateLimits } from "../../src/ratelimit/RateLimits.js"
import { REDIS_HOST, REDIS_PORT, redisSkipReason, redisUp } from "../support/RedisProbe.js"

/** A database of its own (test/ratelimit/redis.test.ts uses 11), and keys named by this run. */
const REDIS_DB = 12
const RUN = `stores-test-${randomBytes(6).toString("hex")}`

const skipReason = redisSkipReason("test/ratelimit/stores.test.ts: Redis cases")

// ---------------------------------------------------------------------------
// helpers

const MINUTE = 60_000
const DAY = 86_400_000
/** 2030-01-01T12:00:00Z: a minute's (and an hour's) start. */
const NOON = Date.UTC(2030, 0, 1, 12, 0, 0)
/** 2030-01-02T00:00:00Z */
const MIDNIGHT = Date.UTC(2030, 0, 2)

type Attempt = { readonly allowed: boolean; readonly remaining: number; readonly resetAfter: number }

/** One request through the library's RateLimiter, as RateLimits makes it. */
const attempt = (key: string, limit: number, window: Duration.DurationInput = Duration.minutes(1)) =>
  Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
    limiter.consume({ key, limit, window, algorithm: "fixed-window", onExceeded: "fail" })
  ).pipe(
    Effect.map((r): Attempt => ({ allowed: true, remaining: r.remaining, resetAfter: Duration.toMillis(r.resetAfter) })),
    Effect.catchIf(
      (e) => e.reason === "Exceeded",
      (e) => Effect.succeed<Attempt>({ allowed: false, remaining: 0, resetAfter: Duration.toMillis(e.retryAfter) })
    )
  )

const attempts = (n: number, key: string, limit: number, window?: Duration.DurationInput) =>
  Effect.forEach(Array.from({ length: n }), () => attempt(key, limit, window))

/** The store's answer for `tokens` more in the current window (0 reads the count without changing it). */
const storeCall = (key: string, limit: number, tokens: number, window: Duration.DurationInput = Duration.minutes(1)) =>
  Effect.flatMap(RateLimiter.RateLimiterStore, (store) =>
    store.fixedWindow({ key, tokens, limit, refillRate: Duration.unsafeDivide(window, limit) })
  )

const countdown = (limit: number, n: number) => Array.from({ length: n }, (_, i) => limit - 1 - i)

const withLimiter = (store: Layer.Layer<RateLimiter.RateLimiterStore>) =>
  Layer.provideMerge(RateLimiter.layer, store)

// ---------------------------------------------------------------------------
// what both stores must do

const semantics = (name: string, store: () => Layer.Layer<RateLimiter.RateLimiterStore>, skip: boolean, reason = "") => {
  const test = skip ? it.effect.skip : it.effect
  const key = (what: string) => `${RUN}-${name}-${what}`

  describe(`${name} store: calendar windows`, () => {
    test(`admits at most limit requests per window and starts over at the window's end${reason}`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOON + 10_000)
        const first = yield* attempts(60, key("limit"), 60)
        expect(first.map((a) => a.allowed)).toEqual(Array(60).fill(true))
        expect(first.map((a) => a.remaining)).toEqual(countdown(60, 60))
        // every answer points at the same end: 12:01:00, 50 s away
        expect(new Set(first.map((a) => a.resetAfter))).toEqual(new Set([50_000]))

        expect(yield* attempt(key("limit"), 60)).toEqual({ allowed: false, remaining: 0, resetAfter: 50_000 })
        yield* TestClock.adjust(49_999)
        expect(yield* attempt(key("limit"), 60)).toEqual({ allowed: false, remaining: 0, resetAfter: 1 })
        // 12:01:00.000: a new window, a new count
        yield* TestClock.adjust(1)
        expect(yield* attempt(key("limit"), 60)).toEqual({ allowed: true, remaining: 59, resetAfter: MINUTE })
      }).pipe(Effect.provide(withLimiter(store())))
    )

    test(`does not count a request over the limit${reason}`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOON + 30_000)
        expect(yield* storeCall(key("over"), 3, 1)).toEqual([1, 30_000])
        expect(yield* storeCall(key("over"), 3, 1)).toEqual([2, 30_000])
        expect(yield* storeCall(key("over"), 3, 1)).toEqual([3, 30_000])
        // over: the count it would have been, and the time left; nothing persisted
        for (let i = 0; i < 5; i++) expect(yield* storeCall(key("over"), 3, 1)).toEqual([4, 30_000])
        expect(yield* storeCall(key("over"), 3, 0)).toEqual([3, 30_000])
        // two tokens when one is left: refused whole, the one left stays
        yield* TestClock.adjust(30_000)
        expect(yield* storeCall(key("over"), 3, 2)).toEqual([2, MINUTE])
        expect(yield* storeCall(key("over"), 3, 2)).toEqual([4, MINUTE])
        expect(yield* storeCall(key("over"), 3, 1)).toEqual([3, MINUTE])
      }).pipe(Effect.provide(withLimiter(store())))
    )

    test(`refuses the 61-in-2.3-seconds pattern (1 request, a 1.5 s pause, then 60)${reason}`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOON + 20_000)
        expect((yield* attempt(key("burst"), 60)).allowed).toBe(true)
        yield* TestClock.adjust(1_500)
        const burst: Array<Attempt> = []
        for (let i = 0; i < 60; i++) {
          burst.push(yield* attempt(key("burst"), 60))
          yield* TestClock.adjust(13) // 60 requests in ~0.8 s
        }
        expect(burst.filter((a) => a.allowed)).toHaveLength(59)
        expect(burst.at(-1)).toMatchObject({ allowed: false, remaining: 0 })
        // and a steady trickle for the rest of the minute gets nothing more
        let admitted = 0
        while ((yield* Clock.currentTimeMillis) < NOON + MINUTE - 1_000) {
          yield* TestClock.adjust(1_000)
          if ((yield* attempt(key("burst"), 60)).allowed) admitted += 1
        }
        expect(admitted).toBe(0)
      }).pipe(Effect.provide(withLimiter(store())))
    )

    test(`aligns a day window on UTC midnight, with a fractional window/limit (a day / 500000 = 172.8 ms)${reason}`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(MIDNIGHT - 3_600_000)
        const day = yield* attempts(3, key("day"), 500_000, Duration.days(1))
        expect(day).toEqual(countdown(500_000, 3).map((remaining) => ({ allowed: true, remaining, resetAfter: 3_600_000 })))
        yield* TestClock.adjust(3_600_000)
        expect(yield* attempt(key("day"), 500_000, Duration.days(1))).toEqual({
          allowed: true,
          remaining: 499_999,
          resetAfter: DAY
        })
      }).pipe(Effect.provide(withLimiter(store())))
    )

    test(`fails on token-bucket and on a fixed window without a limit${reason}`, () =>
      Effect.gen(function* () {
        const store = yield* RateLimiter.RateLimiterStore
        const bucket = yield* Effect.flip(
          store.tokenBucket({ key: key("bucket"), tokens: 1, limit: 10, refillRate: Duration.seconds(6), allowOverflow: false })
        )
        expect(bucket).toBeInstanceOf(RateLimiter.RateLimitStoreError)
        expect(bucket.message).toMatch(/not supported/)
        const noLimit = yield* Effect.flip(
          store.fixedWindow({ key: key("nolimit"), tokens: 1, limit: undefined, refillRate: Duration.seconds(6) })
        )
        expect(noLimit).toBeInstanceOf(RateLimiter.RateLimitStoreError)
      }).pipe(Effect.provide(store()))
    )
  })
}

// ---------------------------------------------------------------------------

semantics("memory", () => RateLimitStore.memory, false)

describe("memory store: bounded", () => {
  it.effect("holds only the current windows' counters, however many windows and keys went by", () => {
    const memory = RateLimitStore.makeMemoryStore()
    return Effect.gen(function* () {
      yield* TestClock.setTime(NOON)
      let largest = 0
      for (let window = 0; window < 200; window++) {
        // 50 clients seen once (addresses that never come back) and 50 that come every minute
        for (let client = 0; client < 50; client++) {
          yield* attempt(`once-${window}-${client}`, 60)
          yield* attempt(`steady-${client}`, 60)
          largest = Math.max(largest, memory.size())
        }
        expect(memory.size()).toBe(100)
        yield* TestClock.adjust(MINUTE)
      }
      expect(largest).toBe(100)
      // a quiet key's counter goes with its window too
      yield* attempt("last", 60)
      expect(memory.size()).toBe(1)
      // a day window's counter stays for its day, next to the minutes that come and go
      yield* attempt("daily", 1000, Duration.days(1))
      yield* TestClock.adjust(MINUTE)
      yield* attempt("last", 60)
      expect(memory.size()).toBe(2)
    }).pipe(Effect.provide(withLimiter(Layer.succeed(RateLimiter.RateLimiterStore, memory.store))))
  })
})

// ---------------------------------------------------------------------------

const redisUrl = new URL(`redis://${REDIS_HOST}:${REDIS_PORT}/${REDIS_DB}`)
semantics("redis", () => RateLimitStore.redis(redisUrl), !redisUp, skipReason)

describe("redis store: keys", () => {
  let client: Redis
  beforeAll(async () => {
    if (!redisUp) return
    client = new Redis({ host: REDIS_HOST, port: REDIS_PORT, db: REDIS_DB, lazyConnect: true })
    await client.connect()
  })
  afterAll(async () => {
    if (!redisUp) return
    try {
      const keys = await client.keys(`${RateLimitStore.REDIS_PREFIX}${RUN}-*`)
      if (keys.length > 0) await client.del(...keys)
    } finally {
      client.disconnect()
    }
  })

  const test = redisUp ? it.effect : it.effect.skip

  test(`keeps a counter per window under ${RateLimitStore.REDIS_PREFIX}, expiring just after its window${skipReason}`, () =>
    Effect.gen(function* () {
      const key = `${RUN}-keys`
      yield* TestClock.setTime(NOON + 15_000)
      yield* attempts(3, key, 60)
      yield* attempts(2, key, 2, Duration.days(1))
      yield* attempt(key, 2, Duration.days(1)) // over: not counted
      const minuteKey = `${RateLimitStore.REDIS_PREFIX}${key}:${Math.floor(NOON / MINUTE)}`
      const dayKey = `${RateLimitStore.REDIS_PREFIX}${key}:${Math.floor(NOON / DAY)}`
      const [keys, minute, day, minuteTtl, dayTtl] = yield* Effect.promise(() =>
        Promise.all([
          client.keys(`${RateLimitStore.REDIS_PREFIX}${key}:*`),
          client.get(minuteKey),
          client.get(dayKey),
          client.pttl(minuteKey),
          client.pttl(dayKey)
        ])
      )
      expect([...keys].sort()).toEqual([minuteKey, dayKey].sort())
      expect([minute, day]).toEqual(["3", "2"])
      // 45 s to 12:01:00, plus the slack; 12 h to midnight, plus the slack
      expect(minuteTtl).toBeGreaterThan(45_000)
      expect(minuteTtl).toBeLessThanOrEqual(45_000 + RateLimitStore.REDIS_EXPIRY_SLACK_MILLIS)
      expect(dayTtl).toBeGreaterThan(MIDNIGHT - NOON - 15_000)
      expect(dayTtl).toBeLessThanOrEqual(MIDNIGHT - NOON - 15_000 + RateLimitStore.REDIS_EXPIRY_SLACK_MILLIS)
    }).pipe(Effect.provide(withLimiter(RateLimitStore.redis(redisUrl))))
  )

  it.effect("fails with a RateLimitStoreError, promptly, when Redis cannot be reached", () =>
    Effect.gen(function* () {
      const started = Date.now()
      const error = yield* Effect.flip(storeCall(`${RUN}-away`, 60, 1))
      expect(error).toBeInstanceOf(RateLimiter.RateLimitStoreError)
      expect(Date.now() - started).toBeLessThan(5_000)
    }).pipe(Effect.provide(RateLimitStore.redis(new URL("redis://127.0.0.1:1/0"))))
  )
})

// ---------------------------------------------------------------------------

describe("RateLimits over the memory store", () => {
  const run = <A, E>(effect: Effect.Effect<A, E, RateLimits>) =>
    Effect.provide(effect, RateLimits.Default.pipe(Layer.provide(withLimiter(RateLimitStore.memory))))

  it.effect("reports the window's end as Reset and the seconds until it as Retry-After", () =>
    run(
      Effect.gen(function* () {
        const limits = yield* RateLimits
        yield* TestClock.setTime(NOON + 10_250)
        const first = yield* limits.consume("acct", { perMinute: 3, perDay: 1000 })
        expect(first).toEqual({ allowed: true, limit: 3, remaining: 2, reset: (NOON + MINUTE) / 1000, retryAfter: 0 })
        yield* limits.consume("acct", { perMinute: 3, perDay: 1000 })
        yield* limits.consume("acct", { perMinute: 3, perDay: 1000 })
        const limited = yield* limits.consume("acct", { perMinute: 3, perDay: 1000 })
        // 49.75 s left: wait 50
        expect(limited).toEqual({ allowed: false, limit: 3, remaining: 0, reset: (NOON + MINUTE) / 1000, retryAfter: 50 })
        yield* TestClock.adjust(49_750)
        expect(yield* limits.consume("acct", { perMinute: 3, perDay: 1000 })).toMatchObject({
          allowed: true,
          remaining: 2,
          reset: (NOON + 2 * MINUTE) / 1000
        })
      })
    )
  )

  it.effect("reports the day's window, ending at UTC midnight, once it binds", () =>
    run(
      Effect.gen(function* () {
        const limits = yield* RateLimits
        yield* TestClock.setTime(NOON)
        expect(yield* limits.consume("day", { perMinute: 50, perDay: 2 })).toMatchObject({
          allowed: true,
          limit: 2,
          remaining: 1,
          reset: MIDNIGHT / 1000
        })
        yield* limits.consume("day", { perMinute: 50, perDay: 2 })
        expect(yield* limits.consume("day", { perMinute: 50, perDay: 2 })).toEqual({
          allowed: false,
          limit: 2,
          remaining: 0,
          reset: MIDNIGHT / 1000,
          retryAfter: (MIDNIGHT - NOON) / 1000
        })
      })
    )
  )
})
