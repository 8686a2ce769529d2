/**
 * Hostile strings and shapes (NUL, lone surrogates, deep JSON, numbers JSON
 * cannot hold, times outside years 1-9999) are 422 naming the field on every
 * route, on PGlite and (with E2E_DATABASE_URL) on PostgreSQL alike.
 */
import { Schema } from "effect"
import { connect } from "node:net"
import { describe, expect, it } from "vitest"
import { MAX_JSON_DEPTH } from "../../src/common/TextHygiene.js"
import { Task } from "../../src/tasks/Task.js"
import { data, expectInvalid, type Fixture, startFixture, useFixture, withQuery } from "../support/LabFixture.js"

let fx: Fixture
useFixture(() => startFixture("hostile"), (started) => (fx = started), 180_000)

/** A raw JSON text as the body, for what JSON.stringify cannot write (1e400, deep nesting). */
const postRaw = (path: string, body: string, token = fx.writer) =>
  fx.server.request("POST", path, { token, body, headers: { "content-type": "application/json" } })

/** `{"a":{"a":…{"a":leaf}}}`, `levels` objects deep. */
const nested = (levels: number, leaf = "1") => `${'{"a":'.repeat(levels)}${leaf}${"}".repeat(levels)}`

describe("NUL and lone surrogates", () => {
  it("refuses them in JSON string values, naming the field", async () => {
    await expectInvalid(await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "a\u0000b" }), "title: must not contain NUL")
    await expectInvalid(
      await fx.post("/api/v1/knowledge", { labId: fx.lab.id, title: "t", body: "lone \udfff here" }),
      "body: must not contain a lone UTF-16 surrogate"
    )
    await expectInvalid(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "\ud800", model: "m" }), "name: must not contain a lone")
    await expectInvalid(
      await fx.post("/api/v1/telemetry", { labId: fx.lab.id, events: [{ name: "x", value: 1, attributes: { x: "\u0000" } }] }),
      "events.0.attributes.x: must not contain NUL"
    )
  })

  it("refuses them in object keys, naming the key", async () => {
    const message = await expectInvalid(
      await fx.post("/api/v1/experiments", { labId: fx.lab.id, name: "e", params: { "lr\u0000": 1 } }),
      "params.lr\\u0000: the field name must not contain NUL"
    )
    expect(message).not.toContain("\u0000")
  })

  it("refuses them in query parameters and path parameters", async () => {
    await expectInvalid(await fx.get("/api/v1/tasks", { labId: "a\u0000" }), "labId: must not contain NUL")
    await expectInvalid(await fx.get("/api/v1/search", { labId: fx.lab.id, q: "loss\u0000" }), "q: must not contain NUL")
    await expectInvalid(await fx.get("/api/v1/agents/agent%00x", { labId: fx.lab.id }), "id: must not contain NUL")
    await expectInvalid(await fx.del("/api/v1/tasks/task%00x", { labId: fx.lab.id }), "taskId: must not contain NUL")
    // percent-encoded bytes that are not UTF-8 (an encoded lone surrogate, a stray byte)
    await expectInvalid(await fx.get("/api/v1/agents/a%ED%BF%BFb", { labId: fx.lab.id }), "id: is not percent-encoded UTF-8")
    await expectInvalid(await fx.get("/api/v1/agents/a%FFb", { labId: fx.lab.id }), "id: is not percent-encoded UTF-8")
  })

  it("keeps well-formed text, astral characters (surrogate pairs) included", async () => {
    const title = "loss 📉 ↓ é 漢字"
    const task = await data(await fx.post("/api/v1/tasks", { labId: fx.lab.id, title }), Task, 201)
    expect(task.title).toBe(title)
  })

  it("checks the /v1 alias the same way, and reads its body once", async () => {
    await expectInvalid(await fx.post("/v1/tasks", { labId: fx.lab.id, title: "\u0000" }), "title: must not contain NUL")
    const task = await data(await fx.post("/v1/tasks", { labId: fx.lab.id, title: "through the alias" }), Task, 201)
    expect(task.title).toBe("through the alias")
  })
})

describe("shapes", () => {
  it("refuses a file path over 1,024 bytes of UTF-8, however few characters it has (a database index holds about 2,700)", async () => {
    const wide = `/${"文".repeat(1_000)}`
    await expectInvalid(await fx.post("/api/v1/files", { labId: fx.lab.id, path: wide, content: "x" }), "path: must be at most 1024 bytes")
    const fits = `/${"文".repeat(341)}`
    expect((await fx.post("/api/v1/files", { labId: fx.lab.id, path: fits, content: "x" })).status).toBe(201)
  })

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels, naming where`, async () => {
    const deep = await postRaw("/api/v1/experiments", `{"labId":"${fx.lab.id}","name":"deep","params":${nested(5_000)}}`)
    await expectInvalid(deep, `params.a.a.a`)
    const huge = await postRaw("/api/v1/tasks", `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`)
    await expectInvalid(huge, `nested deeper than ${MAX_JSON_DEPTH} levels`)
  })

  it(`accepts JSON up to ${MAX_JSON_DEPTH} levels`, async () => {
    // the body is level 1 and params level 2
    const response = await postRaw("/api/v1/experiments", `{"labId":"${fx.lab.id}","name":"deep","params":${nested(MAX_JSON_DEPTH - 1)}}`)
    expect(response.status).toBe(201)
  })

  it("refuses numbers JSON cannot hold", async () => {
    await expectInvalid(
      await postRaw("/api/v1/telemetry", `{"labId":"${fx.lab.id}","events":[{"name":"x","value":1e400}]}`),
      "events.0.value: number out of range"
    )
  })
})

describe("times", () => {
  it("refuses a time outside years 1-9999 wherever one is sent", async () => {
    const scopes = [`lab:${fx.lab.slug}:r`]
    await expectInvalid(await fx.post("/api/v1/auth/keys", { name: "k", scopes, expiresAt: "99999-01-01" }, fx.admin), "expiresAt")
    await expectInvalid(await fx.get("/api/v1/papers", { labId: fx.lab.id, from: "99999-01-01" }), "from")
    await expectInvalid(await fx.get("/api/v1/papers", { labId: fx.lab.id, from: "-000001-01-01T00:00:00Z" }), "from")
    await expectInvalid(await fx.get("/api/v1/costs", { labId: fx.lab.id, to: "+275760-09-13T00:00:00Z" }), "to")
    await expectInvalid(
      await fx.patch(`/api/v1/agents/agent_missing`, { labId: fx.lab.id, lastActiveAt: "99999-01-01" }),
      "lastActiveAt: must be a time from 0001-01-01 to 9999-12-31"
    )
  })

  it("refuses a day of year 0 (standups), as it refuses times before year 1", async () => {
    await expectInvalid(await fx.post("/api/v1/standups", { labId: fx.lab.id, date: "0000-01-01", done: ["x"] }), "date: must be a day from 0001-01-01")
    await expectInvalid(await fx.get("/api/v1/standups", { labId: fx.lab.id, from: "0000-12-31" }), "from: must be a day from 0001-01-01")
  })

  it("accepts the ends of the range", async () => {
    const response = await fx.post("/api/v1/auth/keys", { name: "k", scopes: [`lab:${fx.lab.slug}:r`], expiresAt: "9999-12-31T23:59:59Z" }, fx.admin)
    expect(response.status).toBe(201)
    const old = await fx.get("/api/v1/papers", { labId: fx.lab.id, from: "0001-01-01T00:00:00Z" })
    expect(old.status).toBe(200)
  })

  it("refuses a forged cursor with a time out of range or a NUL in its id", async () => {
    const forge = (position: unknown) => Buffer.from(JSON.stringify(position)).toString("base64url")
    for (const cursor of [forge({ createdAt: "99999-01-01T00:00:00.000Z", id: "task_x" }), forge({ createdAt: "2024-01-01T00:00:00.000Z", id: "task_\u0000" })]) {
      await expectInvalid(await fx.server.request("GET", withQuery("/api/v1/tasks", { labId: fx.lab.id, cursor }), { token: fx.writer }), "cursor")
    }
    // every list's own cursor: the files list pages on paths, the metrics list on numbers
    await expectInvalid(await fx.get("/api/v1/files", { labId: fx.lab.id, cursor: forge({ path: "/a\u0000" }) }), "cursor")
    const experiment = await data(await fx.post("/api/v1/experiments", { labId: fx.lab.id, name: "cursor" }), Task.pipe(Schema.pick("id")), 201)
    await expectInvalid(await fx.get(`/api/v1/experiments/${experiment.id}/metrics`, { labId: fx.lab.id, cursor: forge({ seq: 0.5 }) }), "cursor")
  })
})

describe("bodies other than JSON, and requests node cannot parse", () => {
  it("checks a form-encoded webhook body's repository (the receiver's own check: webhooks are read after their throttle)", async () => {
    const payload = JSON.stringify({ ref: "refs/heads/main", repository: { full_name: "lab/\u0000" } })
    const response = await fx.server.request("POST", "/api/webhooks/github", {
      body: `payload=${encodeURIComponent(payload)}`,
      headers: { "content-type": "application/x-www-form-urlencoded", "x-github-event": "push" }
    })
    await expectInvalid(response, "repository: must not contain NUL")
  })

  it("answers a URL over node's 16 KiB header limit, and a request that is not HTTP, in the envelope", async () => {
    const long = await fetch(`${fx.server.baseUrl}/api/v1/tasks?labId=${"x".repeat(20_000)}`)
    expect({ status: long.status, body: await long.json() }).toMatchObject({ status: 431, body: { error: { code: "headers_too_large", status: 431 } } })
    const { port } = new URL(fx.server.baseUrl)
    const raw = await new Promise<string>((resolve, reject) => {
      let answer = ""
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"))
      socket.on("data", (chunk) => (answer += chunk.toString()))
      socket.on("end", () => resolve(answer))
      socket.on("error", reject)
    })
    expect(raw).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4))).toEqual({
      error: { code: "bad_request", message: "the request is not valid HTTP/1.1", status: 400 }
    })
  })
})
