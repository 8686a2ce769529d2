/**
 * GET /metrics on the real server: the operator's key only, Prometheus's text format, and the series an operator
 * reads (requests by route and status with their latency histogram, rate-limit refusals, the process's memory).
 */
import { describe, expect, it } from "vitest"
import { expectError } from "../support/http.js"
import { type Fixture, startFixture, useFixture } from "../support/LabFixture.js"

let fx: Fixture
useFixture(() => startFixture("metrics"), (started) => (fx = started))

const scrape = async () => {
  const response = await fx.get("/metrics", {}, fx.admin)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return response.text()
}

/** Every line of the text format: a comment (HELP/TYPE) or `name{labels} value`. */
const SERIES = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/
const COMMENT = /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/

const valueOf = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe("GET /metrics", () => {
  it("is the operator's: 401 without a key, 403 with a lab's key", async () => {
    await expectError(await fx.server.request("GET", "/metrics"), 401, "unauthorized")
    await expectError(await fx.get("/metrics", {}, fx.writer), 403, "forbidden")
  })

  it("counts requests by route template and status, with a latency histogram", async () => {
    const before = valueOf(await scrape(), 'http_requests_total{method="GET",route="/api/v1/agents/:id",status="404"}') ?? 0
    for (let i = 0; i < 3; i++) await fx.get(`/api/v1/agents/agent_missing${i}`, { labId: fx.lab.id })
    const text = await scrape()
    for (const line of text.trimEnd().split("\n")) expect(line).toMatch(line.startsWith("#") ? COMMENT : SERIES)
    // the template, never the ids: one series for the three requests
    expect(valueOf(text, 'http_requests_total{method="GET",route="/api/v1/agents/:id",status="404"}')).toBe(before + 3)
    expect(text).not.toContain("agent_missing")
    expect(text).toContain("# TYPE http_request_duration_seconds histogram")
    const count = valueOf(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/agents/:id"}') ?? 0
    expect(count).toBeGreaterThanOrEqual(3)
    expect(valueOf(text, 'http_request_duration_seconds_bucket{method="GET",route="/api/v1/agents/:id",le="+Inf"}')).toBe(count)
    expect(valueOf(text, 'process_memory_bytes{kind="rss"}')).toBeGreaterThan(10 * 1024 * 1024)
  })

  it("counts the requests refused for a rate limit", async () => {
    const before = valueOf(await scrape(), "rate_limit_refusals_total") ?? 0
    // anonymous callers have 60 a minute
    let refused = 0
    for (let i = 0; i < 70; i++) {
      const response = await fx.server.request("GET", "/api/v1/status")
      if (response.status === 429) refused++
      await response.body?.cancel()
    }
    expect(refused).toBeGreaterThan(0)
    expect(valueOf(await scrape(), "rate_limit_refusals_total")).toBe(before + refused)
  })
})
