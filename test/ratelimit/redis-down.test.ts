/**
 * Issue 21 item 12: with Redis down every request took 2.1–4.1 s (a 1 s timeout per Redis command) and the warning
 * logged `"cause":{}`. Here the service runs as deployed (its own process, JSON logs) with REDIS_URL on a TCP proxy
 * in front of the local Redis; the proxy is stopped and started again. While Redis is down requests keep the
 * latency measured before, in the same run, and are still counted (in the replica's memory); the warning says why;
 * once Redis is back the counters are kept there again.
 */
import { Option } from "effect"
import { Redis } from "ioredis"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../support/FreePort.js"
import { REDIS_HOST, REDIS_PORT, redisSkipReason, redisUp } from "../support/RedisProbe.js"
import { MINUTE, roomInWindow } from "../support/RateWindows.js"
import { startServiceProcess, type ServiceProcess } from "../support/ServiceProcess.js"
import { fixedKeys, sleep } from "../support/SyncSupport.js"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

/** A database of its own (redis.test.ts uses 11, stores.test.ts 12). */
const REDIS_DB = 13
const PREFIX = "lab-service:ratelimit:"
const RETRY_MS = 200
const skipReason = redisSkipReason("test/ratelimit/redis-down.test.ts")

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

describe.skipIf(!redisUp)(`rate limits while Redis is down${skipReason}`, () => {
  let proxy: TcpProxy
  let service: ServiceProcess
  let redis: Redis
  let dataDir: string
  const keys = fixedKeys()

  beforeAll(async () => {
    redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, db: REDIS_DB, lazyConnect: true })
    await redis.connect()
    await redis.flushdb()
    proxy = await startTcpProxy({ host: REDIS_HOST, port: REDIS_PORT })
    dataDir = await mkdtemp(join(tmpdir(), "lab-redis-down-"))
    service = await startServiceProcess({
      dataDir,
      ...keys,
      env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}/${REDIS_DB}`, RATE_LIMIT_REDIS_RETRY_MS: String(RETRY_MS), LOG_FORMAT: "json" }
    })
  }, 120_000)
  afterAll(async () => {
    await service?.stop("SIGKILL")
    await proxy?.close()
    await redis?.flushdb()
    redis?.disconnect()
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true })
  })

  /** One counted request: its latency and the remaining count it was told. */
  const call = async () => {
    const started = performance.now()
    const response = await service.request("GET", "/api/v1/me", { token: keys.adminKey })
    await response.body?.cancel()
    expect(response.status).toBe(200)
    return { millis: performance.now() - started, remaining: Number(response.headers.get("x-ratelimit-remaining")) }
  }
  const calls = async (n: number) => {
    const made: Array<{ millis: number; remaining: number }> = []
    for (let i = 0; i < n; i++) made.push(await call())
    return made
  }
  const minuteCounter = () => redis.get(`${PREFIX}admin:minute:${Math.floor(Date.now() / MINUTE)}`).then(Number)

  it("answers at the usual latency from memory, logs why, and counts in Redis again once it is back", { timeout: 120_000 }, async () => {
    await roomInWindow(20_000)
    await calls(5) // warm up
    const baseline = await calls(10)
    const before = await minuteCounter()
    expect(before).toBeGreaterThanOrEqual(15)

    await proxy.down()
    const down = await calls(10)
    // about the baseline, not a Redis timeout per command (1 s each on main)
    expect(median(down.map((c) => c.millis))).toBeLessThan(median(baseline.map((c) => c.millis)) * 4 + 25)
    // still counted, one request at a time, in this replica's memory
    const remaining = down.map((c) => c.remaining)
    expect(remaining.slice(1)).toEqual(remaining.slice(0, -1).map((r) => r - 1))

    // the warning carries a reason in words
    const warnings = service
      .output()
      .split("\n")
      .filter((line) => line.includes("Redis is unavailable"))
    expect(warnings.length).toBeGreaterThanOrEqual(1)
    expect(warnings[0]).toMatch(/"reason":"[^"]*(ECONNRESET|ECONNREFUSED|closed)[^"]*"/)
    expect(service.output()).not.toContain('"cause":{}')

    await proxy.up()
    // back in Redis within a few probes: the shared counter grows again, by one a request
    const deadline = Date.now() + 10_000
    while ((await minuteCounter()) === before && Date.now() < deadline) {
      await call()
      await sleep(RETRY_MS / 2)
    }
    const resumed = await minuteCounter()
    expect(resumed).toBeGreaterThan(before)
    await calls(3)
    expect(await minuteCounter()).toBe(resumed + 3)
    expect(service.output()).toMatch(/Redis answers again/)
  })
})

describe("rate limits with REDIS_URL on a closed port from the start", () => {
  let memoryOnly: TestServer
  let closed: TestServer

  beforeAll(async () => {
    memoryOnly = await startTestServer()
    closed = await startTestServer({ redisUrl: Option.some(new URL(`redis://127.0.0.1:${await freePort()}/0`)), redisRetryMillis: 500 })
  }, 60_000)
  afterAll(async () => {
    await Promise.allSettled([memoryOnly?.close(), closed?.close()])
  })

  const timed = async (server: TestServer, n: number) => {
    const made: Array<{ millis: number; remaining: number }> = []
    for (let i = 0; i < n; i++) {
      const started = performance.now()
      const response = await server.request("GET", "/api/v1/me", { token: server.adminKey })
      await response.body?.cancel()
      expect(response.status).toBe(200)
      made.push({ millis: performance.now() - started, remaining: Number(response.headers.get("x-ratelimit-remaining")) })
    }
    return made
  }

  it("answers as fast as the memory store does, and counts each request", { timeout: 60_000 }, async () => {
    await roomInWindow(10_000)
    await timed(memoryOnly, 3)
    await timed(closed, 3)
    const baseline = await timed(memoryOnly, 10)
    const down = await timed(closed, 10)
    expect(median(down.map((c) => c.millis))).toBeLessThan(median(baseline.map((c) => c.millis)) * 4 + 25)
    const remaining = down.map((c) => c.remaining)
    expect(remaining.slice(1)).toEqual(remaining.slice(0, -1).map((r) => r - 1))
  })
})
