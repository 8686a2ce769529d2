import { Schema } from "effect"
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Me } from "../../src/auth/Api.js"
import type { Plan } from "../../src/common/Schemas.js"
import { Status } from "../../src/status/Api.js"
import { data, expectError, json } from "../support/http.js"
import { DAY, MINUTE, roomInWindow, windowEnd } from "../support/RateWindows.js"
import { operatorOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

// ---------------------------------------------------------------------------
// helpers

const HeaderInt = Schema.compose(Schema.String.pipe(Schema.pattern(/^\d+$/)), Schema.NumberFromString)
const RateHeaders = Schema.Struct({ limit: HeaderInt, remaining: HeaderInt, reset: HeaderInt })

/** The three rate-limit headers as numbers (fails when one is missing or not a whole number). */
const rate = (response: Response) =>
  Schema.decodeUnknownSync(RateHeaders)({
    limit: response.headers.get("x-ratelimit-limit"),
    remaining: response.headers.get("x-ratelimit-remaining"),
    reset: response.headers.get("x-ratelimit-reset")
  })

let labCount = 0
const createLab = async (plan: Plan) => {
  labCount += 1
  return operatorOf(server).createLab(`rl-${plan}-${labCount}`, plan)
}

/** A fresh API key (its own rate-limit account) with read-write access to these labs. */
const createKey = async (...slugs: ReadonlyArray<string>) => {
  const created = await operatorOf(server).createKey({ name: "rate limit test", scopes: slugs.map((slug) => `lab:${slug}:rw`) })
  return created.key
}

/** A free lab with two keys of its own, once the current window has `room` ms left. */
const freeLabWithTwoKeys = async (room: number) => {
  const lab = await createLab("free")
  const keys = [await createKey(lab.slug), await createKey(lab.slug)] as const
  await roomInWindow(room)
  return { lab, keys }
}

/** GET /api/v1/me with this key, expecting 200; returns the rate headers. */
const me = async (token: string) => {
  const response = await server.request("GET", "/api/v1/me", { token })
  await data(response, Me)
  return rate(response)
}

/** Make `n` successful requests with this key, one after the other; returns the Remaining values seen. */
const spend = async (token: string, n: number) => {
  const remaining: Array<number> = []
  for (let i = 0; i < n; i++) remaining.push((await me(token)).remaining)
  return remaining
}

/** 59, 58, …, 60 - n */
const countdown = (limit: number, n: number) => Array.from({ length: n }, (_, i) => limit - 1 - i)

/**
 * Reset is the end of the calendar window that `before`…`after` fell in, and
 * Retry-After the whole seconds from the answer to it.
 */
const expectWindowEnd = (
  headers: { readonly reset: number; readonly retryAfter?: number },
  before: number,
  after: number,
  length = MINUTE
) => {
  expect([windowEnd(before, length), windowEnd(after, length)]).toContain(headers.reset * 1000)
  if (headers.retryAfter !== undefined) {
    expect(headers.retryAfter * 1000).toBeGreaterThanOrEqual(headers.reset * 1000 - after)
    expect(headers.retryAfter * 1000).toBeLessThan(headers.reset * 1000 - before + 1000)
  }
}

/** Expect a 429 rate_limited envelope with a Retry-After and Remaining 0; returns the headers. */
const expectLimited = async (response: Response, limit: number, windowSeconds = 60) => {
  const message = await expectError(response, 429, "rate_limited")
  expect(message).toMatch(new RegExp(`${limit}`))
  const retryAfter = Schema.decodeUnknownSync(HeaderInt)(response.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThan(0)
  // a window never asks a client to wait for longer than the window
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds)
  const headers = rate(response)
  expect(headers).toMatchObject({ limit, remaining: 0 })
  return { ...headers, retryAfter }
}

/** A raw request from a chosen loopback source address (127.0.0.0/8 is all loopback on Linux). */
const requestFrom = (
  localAddress: string,
  path: string,
  headers: Record<string, string> = {}
): Promise<Response> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, server.baseUrl)
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: "GET", localAddress, headers, agent: false },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("error", reject)
        res.on("end", () => {
          const responseHeaders = new Headers()
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === "string") responseHeaders.set(name, value)
            else if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v)
          }
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: responseHeaders }))
        })
      }
    )
    req.on("error", reject)
    req.end()
  })

// ---------------------------------------------------------------------------

describe("rate-limit headers", () => {
  it("are on successful responses, authenticated or not", async () => {
    const lab = await createLab("free")
    const key = await createKey(lab.slug)

    const status = await server.request("GET", "/api/v1/status")
    await data(status, Status)
    expect(rate(status).limit).toBe(60)

    const before = Date.now()
    const mine = await server.request("GET", "/api/v1/me", { token: key })
    const after = Date.now()
    const body = await data(mine, Me)
    expect(body.limits).toEqual({ perMinute: 60, perDay: 1000 })
    const headers = rate(mine)
    expect(headers).toMatchObject({ limit: 60, remaining: 59 })
    // Unix seconds, not milliseconds nor a delta: strictly after the request began, within the minute
    expect(headers.reset * 1000).toBeGreaterThan(before)
    expect(headers.reset * 1000).toBeLessThanOrEqual(after + 61_000)
    // calendar windows: the minute's end, on a whole minute
    expect(headers.reset % 60).toBe(0)
    expectWindowEnd(headers, before, after)
  })

  it("are on error responses (401, 403, 404, 405, 422), which count like any request", async () => {
    const lab = await createLab("free")
    const other = await createLab("free")
    const key = await createKey(lab.slug)
    // the countdown below must not straddle the minute's end
    await roomInWindow(5_000)

    const noToken = await server.request("GET", "/api/v1/me")
    await expectError(noToken, 401, "unauthorized")
    expect(rate(noToken).limit).toBe(60)
    const badToken = await server.request("GET", "/api/v1/me", { token: "lsk_not_a_real_key" })
    await expectError(badToken, 401, "unauthorized")
    expect(rate(badToken).limit).toBe(60)

    const seen: Array<number> = []
    const forbidden = await server.request("GET", `/api/v1/tasks?labId=${other.slug}`, { token: key })
    await expectError(forbidden, 403, "forbidden")
    seen.push(rate(forbidden).remaining)

    const unknownRoute = await server.request("GET", "/api/v1/no-such-thing", { token: key })
    await expectError(unknownRoute, 404, "not_found")
    seen.push(rate(unknownRoute).remaining)

    const missingTask = await server.request("DELETE", `/api/v1/tasks/task_missing?labId=${lab.slug}`, { token: key })
    await expectError(missingTask, 404, "not_found")
    seen.push(rate(missingTask).remaining)

    const wrongMethod = await server.request("PUT", "/api/v1/tasks", { token: key, json: {} })
    await expectError(wrongMethod, 405, "method_not_allowed")
    seen.push(rate(wrongMethod).remaining)

    const invalid = await server.request("GET", `/api/v1/tasks?labId=${lab.slug}&limit=abc`, { token: key })
    await expectError(invalid, 422, "validation_error")
    seen.push(rate(invalid).remaining)

    const invalidBody = await server.request("POST", "/api/v1/tasks", { token: key, json: { labId: lab.slug } })
    await expectError(invalidBody, 422, "validation_error")
    seen.push(rate(invalidBody).remaining)

    for (const response of [forbidden, unknownRoute, missingTask, wrongMethod, invalid, invalidBody]) {
      expect(rate(response).limit).toBe(60)
    }
    expect(seen).toEqual(countdown(60, 6))
  })
})

describe("plan limits", () => {
  it("gives a free-plan key 60 a minute, counting down, and answers the 61st with 429 rate_limited", async () => {
    const lab = await createLab("free")
    const key = await createKey(lab.slug)
    await roomInWindow(15_000)

    expect(await spend(key, 60)).toEqual(countdown(60, 60))

    const before = Date.now()
    const limited = await server.request("GET", "/api/v1/me", { token: key })
    const after = Date.now()
    const headers = await expectLimited(limited, 60)
    expect(headers.reset * 1000).toBeGreaterThan(before)
    expect(headers.reset * 1000).toBeLessThanOrEqual(after + 61_000)
    // Reset is the end of the calendar minute, Retry-After the seconds until then
    expectWindowEnd(headers, before, after)

    // the limit is per account, not per route, and a rejected request does not reset the window
    await expectLimited(await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: key }), 60)
    await expectLimited(await server.request("POST", "/api/v1/tasks", { token: key, json: { labId: lab.slug, title: "t" } }), 60)
    const tasks = await json(await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: server.adminKey }))
    expect(tasks).toMatchObject({ data: [] })
  })

  it("gives a pro-plan key 300 a minute and a team-plan key 1000", async () => {
    const pro = await createLab("pro")
    const proKey = await createKey(pro.slug)
    await roomInWindow(5_000)
    expect(await me(proKey)).toMatchObject({ limit: 300, remaining: 299 })
    expect(await me(proKey)).toMatchObject({ limit: 300, remaining: 298 })

    const team = await createLab("team")
    expect(await me(await createKey(team.slug))).toMatchObject({ limit: 1000, remaining: 999 })
  })

  it("sizes a key on several labs by the highest plan", async () => {
    const free = await createLab("free")
    const pro = await createLab("pro")
    expect(await me(await createKey(free.slug, pro.slug))).toMatchObject({ limit: 300, remaining: 299 })
  })

  it("lets a pro-plan key past the 61st request", async () => {
    const pro = await createLab("pro")
    const key = await createKey(pro.slug)
    await roomInWindow(15_000)
    const remaining = await spend(key, 61)
    expect(remaining.at(-1)).toBe(239)
  })
})

describe("accounts", () => {
  it("counts requests that name no lab per key: a second key of the same lab is not limited with the first", async () => {
    const { lab, keys: [first, second] } = await freeLabWithTwoKeys(15_000)

    await spend(first, 60)
    await expectLimited(await server.request("GET", "/api/v1/me", { token: first }), 60)

    expect(await me(second)).toMatchObject({ limit: 60, remaining: 59 })
    const tasks = await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: second })
    expect(tasks.status).toBe(200)
    expect(rate(tasks)).toMatchObject({ limit: 60, remaining: 58 })
    await json(tasks)

    // and the first stays limited
    await expectLimited(await server.request("GET", "/api/v1/me", { token: first }), 60)
  })

  it("counts unauthenticated requests per client address", async () => {
    await roomInWindow(15_000)
    const remaining: Array<number> = []
    for (let i = 0; i < 60; i++) {
      const response = await requestFrom("127.0.0.2", "/api/v1/status")
      await data(response, Status)
      expect(rate(response).limit).toBe(60)
      remaining.push(rate(response).remaining)
    }
    expect(remaining).toEqual(countdown(60, 60))

    await expectLimited(await requestFrom("127.0.0.2", "/api/v1/status"), 60)
    // a request with a credential that proves nothing is still that address's
    await expectLimited(await requestFrom("127.0.0.2", "/api/v1/me", { authorization: "Bearer lsk_made_up" }), 60)
    // a client cannot pick another bucket by claiming to be forwarded
    await expectLimited(await requestFrom("127.0.0.2", "/api/v1/status", { "x-forwarded-for": "203.0.113.9" }), 60)

    // another address has its own count
    const elsewhere = await requestFrom("127.0.0.3", "/api/v1/status")
    await data(elsewhere, Status)
    expect(rate(elsewhere)).toMatchObject({ limit: 60, remaining: 59 })

    // and a key used from the limited address counts against the key, not the address
    const lab = await createLab("free")
    const key = await createKey(lab.slug)
    const keyed = await requestFrom("127.0.0.2", "/api/v1/me", { authorization: `Bearer ${key}` })
    await data(keyed, Me)
    expect(rate(keyed)).toMatchObject({ limit: 60, remaining: 59 })
  })
})

/** A request about the lab (GET /tasks?labId=…) with this key, expecting 200; returns the rate headers. */
const tasks = async (token: string, labId: string) => {
  const response = await server.request("GET", `/api/v1/tasks?labId=${labId}`, { token })
  await json(response)
  expect(response.status).toBe(200)
  return rate(response)
}

describe("a lab's budget", () => {
  it("binds every credential of the lab: minting another key buys nothing", async () => {
    const { lab, keys: [first, second] } = await freeLabWithTwoKeys(20_000)

    for (let i = 0; i < 60; i++) await tasks(i % 2 === 0 ? first : second, lab.slug)

    // the lab has spent its minute: any of its keys, and a brand-new one, is refused about it
    const fresh = await createKey(lab.slug)
    for (const key of [first, second, fresh]) {
      const before = Date.now()
      const limited = await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: key })
      const after = Date.now()
      const headers = await expectLimited(limited, 60)
      expectWindowEnd(headers, before, after)
      expect(await expectError(await server.request("POST", "/api/v1/tasks", { token: key, json: { labId: lab.id, title: "x" } }), 429, "rate_limited")).toMatch(
        new RegExp(lab.slug)
      )
    }
    const listed = await json(await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: server.adminKey }))
    expect(listed).toMatchObject({ data: [] })

    // requests that name no lab still count per key
    expect(await me(fresh)).toMatchObject({ limit: 60 })
  })

  it("reports whichever window binds: the lab's when it has fewer requests left than the key's", async () => {
    const { lab, keys: [busy, quiet] } = await freeLabWithTwoKeys(10_000)
    for (let i = 0; i < 10; i++) await tasks(busy, lab.slug)
    // the quiet key's own window has 59 left, the lab's 49
    expect(await tasks(quiet, lab.slug)).toMatchObject({ limit: 60, remaining: 49 })
    // a request naming no lab is the key's alone
    expect(await me(quiet)).toMatchObject({ limit: 60, remaining: 58 })
  })

  it("counts a key on several labs against the lab each request names", async () => {
    const free = await createLab("free")
    const pro = await createLab("pro")
    const both = await createKey(free.slug, pro.slug)
    const freeOnly = await createKey(free.slug)
    await roomInWindow(10_000)
    for (let i = 0; i < 30; i++) await tasks(freeOnly, free.slug)
    // free has 29 left after this one, pro 299, the key itself (on the pro plan) 298 after two
    expect(await tasks(both, free.slug)).toMatchObject({ limit: 60, remaining: 29 })
    expect(await tasks(both, pro.slug)).toMatchObject({ limit: 300, remaining: 298 })
  })

  it("is not spent by requests it refuses: another lab's key, or the operator", async () => {
    const lab = await createLab("free")
    const other = await createLab("free")
    const own = await createKey(lab.slug)
    const stranger = await createKey(other.slug)
    await roomInWindow(10_000)
    for (let i = 0; i < 5; i++) {
      await expectError(await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: stranger }), 403, "forbidden")
      await json(await server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: server.adminKey }))
    }
    expect(await tasks(own, lab.slug)).toMatchObject({ limit: 60, remaining: 59 })
  })
})

describe("windows", () => {
  it("reports the window that binds: the day's once it is closer to its limit than the minute's", async () => {
    const small = await startTestServer({ adminLimits: { perMinute: 50, perDay: 5 } })
    try {
      // the day's window ends at 00:00 UTC: keep its countdown within one day
      await roomInWindow(10_000, DAY)
      const seen: Array<{ readonly limit: number; readonly remaining: number }> = []
      for (let i = 0; i < 5; i++) {
        const response = await small.request("GET", "/api/v1/me", { token: small.adminKey })
        await data(response, Me)
        const { limit, remaining } = rate(response)
        seen.push({ limit, remaining })
      }
      expect(seen).toEqual(countdown(5, 5).map((remaining) => ({ limit: 5, remaining })))

      const before = Date.now()
      const limited = await small.request("GET", "/api/v1/me", { token: small.adminKey })
      const after = Date.now()
      const headers = await expectLimited(limited, 5, 86_400)
      // a day window: Reset is the end of the UTC day (no earlier than the current minute's end), within a day
      expectWindowEnd(headers, before, after, DAY)
      expect(headers.reset * 1000).toBeGreaterThanOrEqual(windowEnd(after))
      expect(headers.reset * 1000).toBeLessThanOrEqual(after + 86_401_000)
    } finally {
      await small.close()
    }
  })
})
