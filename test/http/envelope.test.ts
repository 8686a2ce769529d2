import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Lab } from "../../src/labs/Lab.js"
import { Status } from "../../src/status/Api.js"
import { data, expectError, json } from "../support/http.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

describe("envelopes", () => {
  it("wraps a success in {data, meta} with a req_ id that matches X-Request-Id", async () => {
    const status = await data(await server.request("GET", "/api/v1/status"), Status)
    expect(status).toMatchObject({ status: "ok", database: "pglite" })
  })

  it("gives each request its own id", async () => {
    const a = await server.request("GET", "/api/v1/status")
    const b = await server.request("GET", "/api/v1/status")
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"))
  })

  it("serves /v1 as an alias of /api/v1", async () => {
    const lab = await data(
      await server.request("POST", "/v1/labs", { token: server.adminKey, json: { slug: "alias-lab", name: "Alias", plan: "free" } }),
      Lab,
      201
    )
    const labs = await json(await server.request("GET", "/v1/labs", { token: server.adminKey }))
    expect(labs).toMatchObject({ data: [{ id: lab.id, slug: "alias-lab" }] })
    await expectError(await server.request("GET", "/v1/nothing-here"), 404, "not_found")
  })
})

describe("errors", () => {
  it("answers an unknown route with 404 not_found", async () => {
    await expectError(await server.request("GET", "/api/v1/unknown"), 404, "not_found")
    await expectError(await server.request("GET", "/"), 404, "not_found")
  })

  it("answers a wrong method with 405 and an Allow header", async () => {
    const response = await server.request("PUT", "/api/v1/labs", { token: server.adminKey, json: {} })
    expect(response.headers.get("allow")).toBe("GET, POST")
    await expectError(response, 405, "method_not_allowed")
  })

  it("answers malformed JSON with 422 validation_error", async () => {
    const response = await server.request("POST", "/api/v1/labs", {
      token: server.adminKey,
      body: '{"slug": "x",',
      headers: { "content-type": "application/json" }
    })
    expect(await expectError(response, 422, "validation_error")).toMatch(/not valid JSON/)
  })

  it("answers an invalid body with 422 naming the field", async () => {
    const missing = await server.request("POST", "/api/v1/labs", { token: server.adminKey, json: { name: "No slug", plan: "free" } })
    expect(await expectError(missing, 422, "validation_error")).toMatch(/slug/)
    const badPlan = await server.request("POST", "/api/v1/labs", {
      token: server.adminKey,
      json: { slug: "ok-slug", name: "x", plan: "enterprise" }
    })
    expect(await expectError(badPlan, 422, "validation_error")).toMatch(/plan/)
    const unknownField = await server.request("POST", "/api/v1/labs", {
      token: server.adminKey,
      json: { slug: "ok-slug", name: "x", plan: "free", colour: "red" }
    })
    expect(await expectError(unknownField, 422, "validation_error")).toMatch(/colour/)
    const badSlug = await server.request("POST", "/api/v1/labs", { token: server.adminKey, json: { slug: "Bad Slug!", name: "x", plan: "free" } })
    expect(await expectError(badSlug, 422, "validation_error")).toMatch(/slug/)
  })

  it("quotes a long invalid value cut, not whole", async () => {
    const long = await server.request("POST", "/api/v1/labs", { token: server.adminKey, json: { slug: "long-plan", name: "x", plan: "p".repeat(200_000) } })
    const message = await expectError(long, 422, "validation_error")
    expect(message).toMatch(/^plan: .*actual "p+… \(cut, \d+ more characters\)$/)
    expect(message.length).toBeLessThan(1_000)
  })

  it("answers a non-JSON body with 415", async () => {
    const response = await server.request("POST", "/api/v1/labs", {
      token: server.adminKey,
      body: "slug=a&name=b",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    await expectError(response, 415, "unsupported_media_type")
  })

  it("answers an oversized body with 413, declared or chunked", async () => {
    const big = JSON.stringify({ slug: "big", name: "x".repeat(6 * 1024 * 1024), plan: "free" })
    await expectError(await server.request("POST", "/api/v1/labs", { token: server.adminKey, body: big }), 413, "payload_too_large")
    const chunks = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      }
    })
    const chunked = await fetch(`${server.baseUrl}/api/v1/labs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/json" },
      body: chunks,
      duplex: "half"
    } as RequestInit)
    await expectError(chunked, 413, "payload_too_large")
  })

  it("answers a defect with 500 server_error and leaks nothing", async () => {
    const lab = await data(
      await server.request("POST", "/api/v1/labs", { token: server.adminKey, json: { slug: "defect-lab", name: "D", plan: "free" } }),
      Lab,
      201
    )
    await server.sql((sql) => sql`ALTER TABLE tasks RENAME TO tasks_gone`)
    try {
      const response = await server.request("GET", `/api/v1/tasks?labId=${lab.id}`, { token: server.adminKey })
      const message = await expectError(response, 500, "server_error")
      expect(message).toContain(response.headers.get("x-request-id"))
      expect(message).not.toMatch(/tasks|relation|SqlError|at /)
    } finally {
      await server.sql((sql) => sql`ALTER TABLE tasks_gone RENAME TO tasks`)
    }
  })
})

describe("OpenAPI and docs", () => {
  it("serves the OpenAPI document with the envelopes and error codes as on the wire", async () => {
    const response = await server.request("GET", "/api/v1/openapi.json")
    expect(response.status).toBe(200)
    const raw: unknown = await response.json()
    const spec = Schema.decodeUnknownSync(
      Schema.Struct({
        openapi: Schema.String,
        paths: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
        components: Schema.Struct({ schemas: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
      })
    )(raw)
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(["/api/v1/tasks", "/api/v1/tasks/{taskId}", "/api/v1/files", "/api/v1/sync/secret", "/api/webhooks/{host}"])
    )
    expect(spec.components.schemas["Meta"]).toMatchObject({ properties: { request_id: {}, timestamp: {} } })
    expect(spec.components.schemas["ListMeta"]).toMatchObject({ properties: { next_cursor: {}, has_more: {} } })
    expect(spec.components.schemas["NotFoundError"]).toMatchObject({
      properties: { error: { properties: { code: { enum: ["not_found"] }, status: { enum: [404] } } } }
    })
    // what any route can answer besides its own: 405 (a known path, another method), 503 (a lost database connection)
    const tasks = Schema.decodeUnknownSync(
      Schema.Struct({ get: Schema.Struct({ responses: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }) })
    )(spec.paths["/api/v1/tasks"])
    expect(Object.keys(tasks.get.responses)).toEqual(expect.arrayContaining(["200", "405", "422", "429", "500", "503"]))
    expect(spec.components.schemas["MethodNotAllowedError"]).toMatchObject({
      properties: { error: { properties: { code: { enum: ["method_not_allowed"] }, status: { enum: [405] } } } }
    })
    const text = JSON.stringify(raw)
    expect(text.includes("HttpApiDecodeError")).toBe(false)
    expect(text.includes('"400"')).toBe(false)
    expect(text.includes('#/components/schemas/Issue')).toBe(false)
  })

  it("serves interactive docs", async () => {
    // built at the first request (src/http/Docs.ts): the second is served from the same page
    for (let i = 0; i < 2; i++) {
      const response = await server.request("GET", "/docs")
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      const page = await response.text()
      expect(page).toContain('id="api-reference"')
      expect(page).toContain("/api/v1/tasks")
      expect(page.length).toBeGreaterThan(1_000_000)
    }
  })
})

