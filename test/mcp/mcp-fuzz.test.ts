/**
 * The MCP endpoint under fuzz: every tool with hostile arguments (test/support/Hostile.ts) beside arguments shaped as
 * its input schema asks, and malformed JSON-RPC messages, with a read-write key, a read-only key and none. Whatever
 * is sent: never a 5xx, never JSON-RPC's internal error (-32603); a JSON-RPC answer is well formed, and a failed tool
 * call carries the REST envelope's code. On PGlite; on PostgreSQL too when E2E_DATABASE_URL or DATABASE_URL is set.
 * FUZZ_SEED replays a run, MCP_FUZZ_RUNS sets the random calls per database (default 1,500).
 */
import { FastCheck as fc, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hostileBody, hostileString, hostileValue } from "../support/Hostile.js"
import { type Fixture, startFixture } from "../support/LabFixture.js"

const RUNS = Number(process.env["MCP_FUZZ_RUNS"] ?? 1_500)
const SEED = process.env["FUZZ_SEED"] === undefined ? Date.now() % 2 ** 31 : Number(process.env["FUZZ_SEED"])

const ToolList = Schema.Struct({
  result: Schema.Struct({
    tools: Schema.Array(Schema.Struct({ name: Schema.String, inputSchema: Schema.Struct({ properties: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })) }) }))
  })
})
const RpcAnswer = Schema.Union(
  Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: Schema.Unknown, result: Schema.Unknown }),
  Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: Schema.Unknown, error: Schema.Struct({ code: Schema.Number, message: Schema.String }) })
)
const ToolResult = Schema.Struct({ isError: Schema.Boolean, content: Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })) })
const Envelope = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String, status: Schema.Number }) })

interface Call {
  readonly token: "writer" | "reader" | "none"
  readonly body: string
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const check = async (fx: Fixture, call: Call) => {
  const token = call.token === "writer" ? fx.writer : call.token === "reader" ? fx.reader : undefined
  const response = await fetch(`${fx.server.baseUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: call.body,
    signal: AbortSignal.timeout(30_000)
  })
  const text = await response.text()
  const shown = `[FUZZ_SEED=${SEED}] token=${call.token} body=${call.body.slice(0, 300)} → ${response.status} ${text.slice(0, 300)}`
  expect(response.status, shown).toBeLessThan(500)
  if (response.status === 202) return
  const body = parsed(text)
  if (response.status === 401 || response.status === 413 || response.status === 429) {
    expect(Schema.is(Envelope)(body), shown).toBe(true)
    return
  }
  expect(Schema.is(RpcAnswer)(body), shown).toBe(true)
  if (Schema.is(RpcAnswer)(body) && "error" in body) {
    expect([-32700, -32600, -32601, -32602, -32002], shown).toContain(body.error.code)
    return
  }
  if (Schema.is(RpcAnswer)(body) && "result" in body && Schema.is(ToolResult)(body.result) && body.result.isError) {
    expect(Schema.is(Envelope)(parsed(body.result.content[0]?.text ?? "")), shown).toBe(true)
  }
}

const fuzz = (name: string, databaseUrl: string | undefined) =>
  describe(`MCP fuzz on ${name}`, () => {
    let fx: Fixture
    let tools: ReadonlyArray<{ readonly name: string; readonly fields: ReadonlyArray<string> }> = []
    beforeAll(async () => {
      const database = databaseUrl === undefined ? { database: { kind: "pglite" as const, dataDir: undefined } } : {}
      fx = await startFixture(`mcpfuzz-${name}`, database, databaseUrl)
      const listed = await fx.server.request("POST", "/mcp", { token: fx.writer, json: { jsonrpc: "2.0", id: 1, method: "tools/list" } })
      tools = Schema.decodeUnknownSync(ToolList)(await listed.json()).result.tools.map((t) => ({
        name: t.name,
        fields: Object.keys(t.inputSchema.properties ?? {})
      }))
    }, 120_000)
    afterAll(() => fx?.close())

    it("answers every tool's hostile arguments and malformed messages without a 5xx or -32603", { timeout: 300_000 }, async () => {
      expect(tools.length).toBeGreaterThan(30)
      const token = fc.constantFrom<Call["token"]>("writer", "writer", "reader", "none")
      const labId = fc.constantFrom(fx.lab.id, fx.lab.slug, fx.other.id, undefined)
      const argsFor = (fields: ReadonlyArray<string>) =>
        fc.oneof(
          fc.record(Object.fromEntries(fields.map((f) => [f, fc.option(fc.oneof(hostileValue, fc.jsonValue({ maxDepth: 2 })), { nil: undefined })]))),
          fc.dictionary(hostileString, hostileValue, { maxKeys: 3 }),
          hostileValue
        )
      const toolCall = fc.constantFrom(...tools).chain((tool) =>
        fc.record({
          token,
          body: fc.tuple(argsFor(tool.fields), labId).map(([args, lab]) =>
            JSON.stringify({
              jsonrpc: "2.0",
              id: 7,
              method: "tools/call",
              params: { name: tool.name, arguments: typeof args === "object" && args !== null && !Array.isArray(args) && lab !== undefined ? { labId: lab, ...args } : args }
            })
          )
        })
      )
      const message = fc.record({
        token,
        body: fc.oneof(
          hostileBody,
          fc
            .record({ method: fc.oneof(hostileString, fc.constantFrom("initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list", "notifications/initialized")), params: hostileValue, id: fc.oneof(hostileValue, fc.constant(undefined)) })
            .map((m) => JSON.stringify({ jsonrpc: "2.0", ...m }))
        )
      })
      // a resource URI whose path percent-decodes to anything: bytes that are not UTF-8, NUL, lone surrogates
      const percentEncoded = fc
        .array(
          fc.oneof(
            fc.constantFrom("%00", "%ED%A0%80", "%2F..%2F", "%C3%A9", "%FF", "%"),
            fc.uint8Array({ minLength: 1, maxLength: 3 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")),
            fc.stringMatching(/^[a-z0-9.]{1,4}$/)
          ),
          { minLength: 1, maxLength: 5 }
        )
        .map((parts) => parts.join(""))
      const resourceRead = fc.record({
        token,
        body: fc
          .tuple(fc.constantFrom(fx.lab.slug, fx.other.slug), percentEncoded)
          .map(([slug, path]) => JSON.stringify({ jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: `lab://${slug}/files/${path}` } }))
      })
      // every tool a few times first, so none is left to chance; then random calls and messages
      for (const tool of tools) for (const call of fc.sample(toolCall.filter((c) => c.body.includes(`"${tool.name}"`)), { numRuns: 3, seed: SEED })) await check(fx, call)
      await fc.assert(fc.asyncProperty(fc.oneof(toolCall, toolCall, message, resourceRead), (call) => check(fx, call)), { numRuns: RUNS, seed: SEED, endOnFailure: true })
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]
console.log(`MCP fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`)
fuzz("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") fuzz("postgresql", postgresUrl)
