import { Option, Schema } from "effect"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Me } from "../../src/auth/Api.js"
import type { Plan } from "../../src/common/Schemas.js"
import { Lab } from "../../src/labs/Lab.js"
import { data, expectError } from "../support/http.js"
import { DAY, MINUTE, roomInWindow } from "../support/RateWindows.js"
import { operatorOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { REDIS_HOST, REDIS_PORT, redisSkipReason, redisUp } from "../support/RedisProbe.js"

/** A database of its own, so nothing else on this Redis is touched. */
const REDIS_DB = 11
const PREFIX = "lab-service:ratelimit:"

const skipReason = redisSkipReason("test/ratelimit/redis.test.ts")

const HeaderInt = Schema.compose(Schema.String.pipe(Schema.pattern(/^\d+$/)), Schema.NumberFromString)
const rate = (response: Response) =>
  Schema.decodeUnknownSync(Schema.Struct({ limit: HeaderInt, remaining: HeaderInt }))({
    limit: response.headers.get("x-ratelimit-limit"),
    remaining: response.headers.get("x-ratelimit-remaining")
  })

const RowJson = Schema.Array(Schema.Struct({ row: Schema.String }))

/**
 * Each server has its own in-memory database; copy a row (by id) from one to
 * the other so both know the same lab and key, as replicas on one database would.
 */
const copyRow = async (from: TestServer, to: TestServer, table: "labs" | "api_keys", id: string) => {
  const rows = await from.sql((sql) => sql`SELECT row_to_json(t)::text AS row FROM ${sql(table)} t WHERE id = ${id}`)
  const [found] = Schema.decodeUnknownSync(RowJson)(rows)
  if (!found) throw new Error(`no ${table} row ${id}`)
  await to.sql((sql) => sql`INSERT INTO ${sql(table)} SELECT * FROM json_populate_record(NULL::${sql(table)}, ${found.row}::json)`)
}

describe("rate limits in Redis", () => {
  const redisUrl = Option.some(new URL(`redis://${REDIS_HOST}:${REDIS_PORT}/${REDIS_DB}`))
  let a: TestServer
  let b: TestServer
  let redis: Redis
  const created: Array<string> = []

  beforeAll(async () => {
    if (!redisUp) return
    redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, db: REDIS_DB, lazyConnect: true })
    await redis.connect()
    a = await startTestServer({ redisUrl })
    b = await startTestServer({ redisUrl })
  })

  afterAll(async () => {
    if (!redisUp) return
    try {
      // the keys' counters, and the operator's (whose requests set the fixtures up)
      for (const account of [...created, "admin"]) {
        const keys = await redis.keys(`${PREFIX}${account}:*`)
        if (keys.length > 0) await redis.del(...keys)
      }
    } finally {
      await Promise.allSettled([a?.close(), b?.close()])
      redis.disconnect()
    }
  })

  /** A lab on this plan and a key on it, known to both servers. */
  const sharedKey = async (plan: Plan = "free") => {
    const slug = `rl-redis-${randomBytes(6).toString("hex")}`
    const lab = await operatorOf(a).createLab(slug, plan)
    const key = await operatorOf(a).createKey({ name: "shared", scopes: [`lab:${slug}:rw`] })
    created.push(key.id)
    await copyRow(a, b, "labs", lab.id)
    await copyRow(a, b, "api_keys", key.id)
    return key
  }

  const me = async (server: TestServer, token: string) => {
    const response = await server.request("GET", "/api/v1/me", { token })
    await data(response, Me)
    return rate(response)
  }

  it.skipIf(!redisUp)(`counts one key's requests on two servers against one limit${skipReason}`, async () => {
    const key = await sharedKey()
    // one calendar minute for the whole countdown
    await roomInWindow(15_000)

    const remaining: Array<number> = []
    for (let i = 0; i < 30; i++) remaining.push((await me(a, key.key)).remaining)
    for (let i = 0; i < 30; i++) remaining.push((await me(b, key.key)).remaining)
    // one countdown across both servers: 59 … 0, not 59 … 30 twice
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i))

    for (const server of [a, b]) {
      const limited = await server.request("GET", "/api/v1/me", { token: key.key })
      await expectError(limited, 429, "rate_limited")
      expect(rate(limited)).toEqual({ limit: 60, remaining: 0 })
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    }
  })

  it.skipIf(!redisUp)(`counts a lab's requests from two keys on two servers against the lab's one budget${skipReason}`, async () => {
    const first = await sharedKey()
    const lab = first.scopes[0]?.split(":")[1] ?? ""
    const second = await operatorOf(a).createKey({ name: "second", scopes: [`lab:${lab}:rw`] })
    created.push(second.id)
    await copyRow(a, b, "api_keys", second.id)
    const labId = (await data(await a.request("GET", "/api/v1/labs?limit=100", { token: a.adminKey }), Schema.Array(Lab))).find(
      (l) => l.slug === lab
    )?.id
    created.push(`lab:${labId}`)
    await roomInWindow(15_000)

    const tasks = (server: TestServer, token: string) => server.request("GET", `/api/v1/tasks?labId=${lab}`, { token })
    for (let i = 0; i < 30; i++) expect((await tasks(a, first.key)).status).toBe(200)
    const seen: Array<number> = []
    for (let i = 0; i < 30; i++) seen.push(rate(await tasks(b, second.key)).remaining)
    // the second key's own window has 59 … 30 left; the lab's, counted on both servers, 29 … 0 binds
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i))
    for (const [server, key] of [[a, second.key], [b, first.key]] as const) {
      const limited = await tasks(server, key)
      await expectError(limited, 429, "rate_limited")
      expect(rate(limited)).toEqual({ limit: 60, remaining: 0 })
    }
  })

  it.skipIf(!redisUp).each([
    ["free", 60],
    ["pro", 300],
    ["team", 1000]
  ] as const)(`keeps every window's counter of a %s-plan key in Redis under ${PREFIX}${skipReason}`, async (plan, limit) => {
    const key = await sharedKey(plan)
    await roomInWindow(10_000)
    const now = Date.now()
    await me(a, key.key)
    await me(b, key.key)
    expect(await me(a, key.key)).toEqual({ limit, remaining: limit - 3 })

    const keys = await redis.keys(`${PREFIX}*`)
    const mine = keys.filter((k) => k.startsWith(`${PREFIX}${key.id}:`)).sort()
    // a per-minute and a per-day window, both counted in Redis (a window the store rejects is not enforced at all),
    // each under the number of its calendar window
    expect(mine).toEqual([
      `${PREFIX}${key.id}:day:${Math.floor(now / DAY)}`,
      `${PREFIX}${key.id}:minute:${Math.floor(now / MINUTE)}`
    ])
    const counts = await Promise.all(mine.map((k) => redis.get(k)))
    // every window of this account counted the three requests, whichever server served them
    expect(counts).toEqual(["3", "3"])

    // the servers hold no count of their own: with the counters gone, both start over
    await redis.del(...mine)
    expect(await me(b, key.key)).toEqual({ limit, remaining: limit - 1 })
    expect(await me(a, key.key)).toEqual({ limit, remaining: limit - 2 })
  })
})
