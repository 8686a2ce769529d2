/**
 * Idempotency keys over real HTTP: a retried POST with the same key is answered again (marked Idempotent-Replayed)
 * and creates nothing twice, whether REST or an MCP tool call; a key reused for another request is 422 naming the
 * header; keys are per credential; the quota of keys and the size of kept answers hold. The store itself (in-flight
 * conflict, expiry and the removal of expired rows) is driven on the server's own database. On PGlite, and on
 * PostgreSQL with DATABASE_URL or E2E_DATABASE_URL (a fresh schema).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect, Either, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_IDEMPOTENCY, type IdempotencySettings, type KeyedRequest, make, removeExpired } from "../../src/idempotency/IdempotencyKeys.js"
import { Task } from "../../src/tasks/Task.js"
import { expectError, type Fixture, page, sleep, startFixture } from "../support/LabFixture.js"

const MAX_KEYS = 6

const suite = (name: string, databaseUrl: string | undefined) =>
  describe(`idempotency keys on ${name}`, () => {
    let fx: Fixture
    beforeAll(async () => {
      const database = databaseUrl === undefined ? { database: { kind: "pglite" as const, dataDir: undefined } } : {}
      fx = await startFixture(`idem-${name}`, { ...database, idempotency: { ...DEFAULT_IDEMPOTENCY, maxKeys: MAX_KEYS } }, databaseUrl)
    }, 120_000)
    afterAll(() => fx?.close())

    const post = (path: string, json: unknown, key: string, token = fx.writer) =>
      fx.server.request("POST", path, { token, json, headers: { "idempotency-key": key } })
    const tasksTitled = async (title: string) => {
      const listed = await page(await fx.get("/api/v1/tasks", { labId: fx.lab.id, limit: 100 }), Task)
      return listed.data.filter((task) => task.title === title)
    }

    it("answers a repeated POST with the first answer, marked replayed, and creates one task", async () => {
      const key = randomUUID()
      const body = { labId: fx.lab.id, title: "once only" }
      const first = await post("/api/v1/tasks", body, key)
      const firstText = await first.text()
      expect(first.status).toBe(201)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      const again = await post("/api/v1/tasks", body, key)
      expect(again.status).toBe(201)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.headers.get("content-type")).toMatch(/application\/json/)
      expect(await again.text()).toBe(firstText)
      expect(await tasksTitled("once only")).toHaveLength(1)
    })

    it("creates one record when the same keyed request is sent many times at once", async () => {
      const key = randomUUID()
      const body = { labId: fx.lab.id, title: "sent at once" }
      const answers = await Promise.all(Array.from({ length: 6 }, () => post("/api/v1/tasks", body, key)))
      // each is the first answer, a replay of it, or told the first is still running
      for (const answer of answers) {
        expect([201, 409]).toContain(answer.status)
        if (answer.status === 409) expect(answer.headers.get("retry-after")).toBe("1")
      }
      expect(answers.filter((a) => a.status === 201 && a.headers.get("idempotent-replayed") === null)).toHaveLength(1)
      expect(await tasksTitled("sent at once")).toHaveLength(1)
    })

    it("keeps a refusal as it was sent: a repeat of a 404 is the same 404", async () => {
      const key = randomUUID()
      const remove = () =>
        fx.server.request("DELETE", `/api/v1/tasks/task_0000000000000000?labId=${fx.lab.id}`, { token: fx.writer, headers: { "idempotency-key": key } })
      await expectError(await remove(), 404, "not_found")
      const again = await remove()
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      await expectError(again, 404, "not_found")
    })

    it("refuses the same key with another body or path with 422 naming the header", async () => {
      const key = randomUUID()
      expect((await post("/api/v1/tasks", { labId: fx.lab.id, title: "first body" }, key)).status).toBe(201)
      const otherBody = await post("/api/v1/tasks", { labId: fx.lab.id, title: "second body" }, key)
      expect(await expectError(otherBody, 422, "validation_error")).toMatch(/^Idempotency-Key: .*POST \/api\/v1\/tasks/)
      const otherPath = await post("/api/v1/projects", { labId: fx.lab.id, name: "p" }, key)
      expect(await expectError(otherPath, 422, "validation_error")).toMatch(/^Idempotency-Key/)
      expect(await tasksTitled("second body")).toHaveLength(0)
    })

    it("refuses a key that is not 1 to 255 printable ASCII characters", async () => {
      for (const key of ["k".repeat(256), "tab\there", "", "caf\u00e9"]) {
        const refused = await post("/api/v1/tasks", { labId: fx.lab.id, title: "bad key" }, key)
        expect(await expectError(refused, 422, "validation_error")).toMatch(/^Idempotency-Key/)
      }
      expect(await tasksTitled("bad key")).toHaveLength(0)
    })

    it("keeps keys per credential: the same key from another credential is another request", async () => {
      const key = randomUUID()
      const body = { labId: fx.lab.id, title: "two credentials" }
      expect((await post("/api/v1/tasks", body, key, fx.writer)).status).toBe(201)
      const admin = await post("/api/v1/tasks", body, key, fx.admin)
      expect(admin.status).toBe(201)
      expect(admin.headers.get("idempotent-replayed")).toBeNull()
      expect(await tasksTitled("two credentials")).toHaveLength(2)
    })

    it("covers MCP tool calls: a repeated tools/call with the same key creates one task", async () => {
      const key = randomUUID()
      const message = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "create_task", arguments: { labId: fx.lab.id, title: "via mcp once" } } }
      const send = () =>
        fx.server.request("POST", "/mcp", {
          token: fx.writer,
          json: message,
          headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", "idempotency-key": key }
        })
      const first = await send()
      expect(first.status).toBe(200)
      const again = await send()
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(await again.text()).toBe(await first.text())
      expect(await tasksTitled("via mcp once")).toHaveLength(1)
    })

    it("holds each credential to its quota of keys, and still replays the ones it holds", async () => {
      const { key: token } = await fx.createKey(`lab:${fx.lab.slug}:rw`)
      const keys = Array.from({ length: MAX_KEYS }, () => randomUUID())
      for (const key of keys) expect((await post("/api/v1/tasks", { labId: fx.lab.id, title: `quota ${key}` }, key, token)).status).toBe(201)
      const over = await post("/api/v1/tasks", { labId: fx.lab.id, title: "over the quota" }, randomUUID(), token)
      expect(await expectError(over, 403, "quota_exceeded")).toMatch(/idempotency keys/)
      const replay = await post("/api/v1/tasks", { labId: fx.lab.id, title: `quota ${keys[0]}` }, keys[0] ?? "", token)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      // without a key the write goes on as usual
      expect((await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "no key" }, token)).status).toBe(201)
    })

    it("is declared in the OpenAPI document on every write", async () => {
      const Operation = Schema.Struct({ parameters: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [] }) })
      const Document = Schema.Struct({
        components: Schema.Struct({ parameters: Schema.Struct({ IdempotencyKey: Schema.Struct({ name: Schema.String, in: Schema.String }) }) }),
        paths: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Operation }) })
      })
      const document = Schema.decodeUnknownSync(Document)(await (await fx.server.request("GET", "/api/v1/openapi.json")).json())
      expect(document.components.parameters.IdempotencyKey).toEqual({ name: "Idempotency-Key", in: "header" })
      const ref = { $ref: "#/components/parameters/IdempotencyKey" }
      expect(document.paths["/api/v1/tasks"]?.["post"]?.parameters).toContainEqual(ref)
      expect(document.paths["/api/v1/tasks/{taskId}"]?.["delete"]?.parameters).toContainEqual(ref)
      expect(document.paths["/api/v1/tasks"]?.["get"]?.parameters).not.toContainEqual(ref)
    })

    describe("the store", () => {
      const request = (key: string): KeyedRequest => ({ credential: "api_key:store-test", key, method: "POST", url: "/api/v1/tasks", body: "{}" })
      const withStore = <A, E>(
        settings: IdempotencySettings,
        use: (store: Effect.Effect.Success<ReturnType<typeof make>>) => Effect.Effect<A, E, SqlClient.SqlClient>
      ) => fx.server.sql((sql) => Effect.provideService(Effect.flatMap(make(settings), use), SqlClient.SqlClient, sql))

      it("refuses a repeat while the first is running, and runs it again once the first is forgotten", async () => {
        const outcomes = await withStore(DEFAULT_IDEMPOTENCY, (store) =>
          Effect.gen(function* () {
            const key = randomUUID()
            const first = yield* store.claim(request(key))
            const meanwhile = yield* store.claim(request(key))
            yield* store.forget(request(key))
            const after = yield* store.claim(request(key))
            return { first, meanwhile, after }
          })
        )
        expect(outcomes.first._tag).toBe("Run")
        expect(outcomes.meanwhile._tag).toBe("Running")
        expect(outcomes.after._tag).toBe("Run")
      })

      it("says an answer too large to keep was not kept, instead of doing the work again", async () => {
        const repeat = await withStore({ ...DEFAULT_IDEMPOTENCY, maxAnswerBytes: 8 }, (store) =>
          Effect.gen(function* () {
            const key = randomUUID()
            yield* store.claim(request(key))
            yield* store.keep(request(key), { status: 201, contentType: "application/json", body: new TextEncoder().encode('{"data":"more than 8"}') })
            return yield* Effect.either(store.claim(request(key)))
          })
        )
        expect(Either.isLeft(repeat) && repeat.left.message).toMatch(/too large to keep.*read the resource/)
      })

      it("forgets an answer once its time is over, and removes expired rows", async () => {
        const key = randomUUID()
        const { expired, removed } = await withStore({ ...DEFAULT_IDEMPOTENCY, keepFor: Duration.millis(1_000) }, (store) =>
          Effect.gen(function* () {
            yield* store.claim(request(key))
            yield* store.keep(request(key), { status: 201, contentType: "application/json", body: new Uint8Array([123, 125]) })
            const kept = yield* store.claim(request(key))
            expect(kept._tag).toBe("Replay")
            yield* Effect.promise(() => sleep(1_200))
            const expired = yield* store.claim(request(key))
            yield* store.keep(request(key), { status: 201, contentType: "application/json", body: new Uint8Array([123, 125]) })
            yield* Effect.promise(() => sleep(1_200))
            return { expired, removed: yield* removeExpired }
          })
        )
        expect(expired._tag).toBe("Run")
        expect(removed).toBeGreaterThanOrEqual(1)
        const left = await fx.server.sql((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${key}`)
        expect(left[0]?.n).toBe(0)
      })
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]

suite("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") suite("postgresql", postgresUrl)
