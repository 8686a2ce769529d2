/**
 * Issue 21 item 13: checking a key the instance has not seen lately writes its `last_used_at`. With PostgreSQL
 * down, a read by such a key answered 503 "may or may not have been applied": the bookkeeping write counted as the
 * request's. A read is told nothing changed (and may be retried); once the database is back, it is answered and the
 * key's use is still noted. PostgreSQL only, behind a TCP proxy this test stops (PGlite has no connection to lose).
 */
import { Redacted, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKey } from "../../src/auth/ApiKey.js"
import { data } from "../support/http.js"
import { freshDatabase, operatorOf } from "../support/LabFixture.js"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

const url = process.env["DATABASE_URL"]

const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, status: Schema.Number })
})

describe.skipIf(url === undefined || url === "")("a read while PostgreSQL is down (item 13)", () => {
  let server: TestServer
  let proxy: TcpProxy
  let drop = async () => {}

  beforeAll(async () => {
    const db = await freshDatabase(url)
    drop = db.drop
    if (db.url === undefined) throw new Error("expected a PostgreSQL schema")
    const direct = new URL(db.url)
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
    const proxied = new URL(db.url)
    proxied.port = String(proxy.port)
    server = await startTestServer({ database: { kind: "postgresql", url: Redacted.make(proxied.toString()) } })
  })
  afterAll(async () => {
    await proxy?.up()
    await server?.close()
    await proxy?.close()
    await drop()
  })

  it("answers a read by a key not checked lately 503 'nothing was changed', then 200 once PostgreSQL is back", { timeout: 60_000 }, async () => {
    const operator = operatorOf(server)
    const lab = await operator.createLab("bookkeeping-loss")
    const reader = await operator.createKey(`lab:${lab.slug}:r`)
    const read = () => server.request("GET", `/api/v1/tasks?labId=${lab.slug}`, { token: reader.key })

    await proxy.down()
    const answers: Array<{ status: number; code: string; message: string; retryAfter: string | null }> = []
    for (let i = 0; i < 3; i++) {
      const response = await read()
      const body = Schema.decodeUnknownSync(ErrorEnvelope)(await response.json())
      answers.push({ status: response.status, code: body.error.code, message: body.error.message, retryAfter: response.headers.get("retry-after") })
    }
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 503,
        code: "service_unavailable",
        message: "the database connection was lost; nothing was changed: retry",
        retryAfter: "1"
      })
    }

    await proxy.up()
    const answered = await read()
    expect(answered.status).toBe(200)
    await answered.body?.cancel()
    // the bookkeeping still happens when the database is there
    const keys = await data(await server.request("GET", "/api/v1/auth/keys?limit=100", { token: server.adminKey }), Schema.Array(ApiKey))
    expect(keys.find((k) => k.id === reader.id)?.lastUsedAt).toBeInstanceOf(Date)
  })
})
