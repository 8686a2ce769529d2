/**
 * The MCP edge with the official MCP TypeScript SDK as the client, over real HTTP against the running server: the
 * handshake, the tools as a credential and the URL offer them, file tools beside REST, tool errors carrying the REST
 * envelope's codes, resources, and 401 with the protected-resource metadata. On PGlite, and on PostgreSQL when
 * E2E_DATABASE_URL is set (as every fixture test).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { data, type Fixture, operatorOf, startFixture, useFixture } from "../support/LabFixture.js"

let fx: Fixture
useFixture(() => startFixture("mcp"), (started) => (fx = started))

const connect = async (token: string, query = "") => {
  const client = new Client({ name: "lab-service-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${fx.server.baseUrl}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } }
  })
  await client.connect(transport)
  return client
}

const TextContent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const ErrorEnvelope = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String, status: Schema.Number }) })
const FileBody = Schema.Struct({ path: Schema.String, content: Schema.String, sha: Schema.String })

/** A tool result's text, checked to be the same JSON as its structuredContent. */
const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  const content = Schema.decodeUnknownSync(Schema.Array(TextContent))(result.content)
  const text = content[0]?.text ?? ""
  expect(JSON.parse(text)).toEqual(result.structuredContent)
  return text
}

const failureOf = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  expect(result.isError).toBe(true)
  return Schema.decodeUnknownSync(Schema.parseJson(ErrorEnvelope))(textOf(result)).error
}

describe("the MCP endpoint with the official SDK", () => {
  it("initializes on a protocol version the SDK speaks and names the server", async () => {
    const client = await connect(fx.writer)
    expect(client.getServerVersion()).toMatchObject({ name: "lab-service" })
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} })
    await client.ping()
    await client.close()
  })

  it("offers every toolset's tools to a read-write key, only read tools to a read-only key, and what the URL picks", async () => {
    const names = async (token: string, query = "") => {
      const client = await connect(token, query)
      const { tools } = await client.listTools()
      await client.close()
      return tools.map((t) => t.name).sort()
    }
    const all = await names(fx.writer)
    expect(all).toEqual(expect.arrayContaining(["read_file", "write_file", "edit_file", "delete_file", "list_files", "sync_status", "sync_now", "search", "list_tasks", "create_task"]))
    // a read-only key gets every toolset's read tools, and only those
    const everything = await connect(fx.writer)
    const readTools = (await everything.listTools()).tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name)
    await everything.close()
    expect(readTools).toEqual(expect.arrayContaining(["read_file", "list_files", "sync_status", "search", "list_tasks"]))
    expect(await names(fx.reader)).toEqual(readTools.sort())
    expect(await names(fx.writer, "?toolsets=files")).toEqual(["delete_file", "edit_file", "list_files", "read_file", "write_file"])
    expect(await names(fx.writer, "?toolsets=files,tasks&readonly=1")).toEqual(["list_files", "list_tasks", "read_file"])

    const client = await connect(fx.writer)
    const { tools } = await client.listTools()
    const write = tools.find((t) => t.name === "write_file")
    expect(write?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
    expect(tools.find((t) => t.name === "sync_now")?.annotations?.openWorldHint).toBe(true)
    expect(tools.find((t) => t.name === "read_file")?.annotations?.readOnlyHint).toBe(true)
    expect(write?.inputSchema.properties).toHaveProperty("content")
    expect(write?.inputSchema.required).toEqual(expect.arrayContaining(["path", "content"]))
    await client.close()
  })

  it("write_file is the REST write: the file reads back through REST", async () => {
    const client = await connect(fx.writer)
    const written = await client.callTool({ name: "write_file", arguments: { path: "/agents/plan.md", content: "# Plan\n\nstep one\n" } })
    expect(written.isError).toBe(false)
    expect(written.structuredContent).toMatchObject({ path: "/agents/plan.md", created: true })
    const read = await data(await fx.get("/api/v1/files", { labId: fx.lab.id, path: "/agents/plan.md" }), FileBody)
    expect(read.content).toBe("# Plan\n\nstep one\n")
    await client.close()
  })

  it("create_task writes the activity entry REST writes, attributed to the key", async () => {
    const client = await connect(fx.writer)
    const created = await client.callTool({ name: "create_task", arguments: { title: "Read the plan" } })
    expect(created.structuredContent).toMatchObject({ title: "Read the plan", status: "todo", labId: fx.lab.id })
    const id = Schema.decodeUnknownSync(Schema.Struct({ id: Schema.String }))(created.structuredContent).id
    const entries = await fx.activity()
    expect(entries.find((e) => e.ref === id)).toMatchObject({ kind: "task.created", actor: fx.writerId })
    const listed = await client.callTool({ name: "list_tasks", arguments: { status: "todo", limit: 1 } })
    expect(listed.structuredContent).toMatchObject({ items: [{ id }] })
    await client.close()
  })

  it("edit_file replaces exactly one occurrence; none or several is a validation error naming oldText, changing nothing", async () => {
    const client = await connect(fx.writer)
    await client.callTool({ name: "write_file", arguments: { path: "/agents/edit.md", content: "alpha\nbeta\nbeta\n" } })
    const edited = await client.callTool({ name: "edit_file", arguments: { path: "/agents/edit.md", oldText: "alpha", newText: "ALPHA" } })
    expect(edited.isError).toBe(false)
    const none = failureOf(await client.callTool({ name: "edit_file", arguments: { path: "/agents/edit.md", oldText: "gamma", newText: "x" } }))
    expect(none).toMatchObject({ code: "validation_error", status: 422, message: expect.stringMatching(/^oldText: does not occur/) })
    const two = failureOf(await client.callTool({ name: "edit_file", arguments: { path: "/agents/edit.md", oldText: "beta", newText: "x" } }))
    expect(two).toMatchObject({ code: "validation_error", message: expect.stringMatching(/^oldText: occurs more than once/) })
    const read = await data(await fx.get("/api/v1/files", { labId: fx.lab.id, path: "/agents/edit.md" }), FileBody)
    expect(read.content).toBe("ALPHA\nbeta\nbeta\n")
    await client.close()
  })

  it("refuses as REST refuses: a read-only key's write, another lab, a missing file, a bad argument", async () => {
    const reader = await connect(fx.reader)
    const refused = failureOf(await reader.callTool({ name: "write_file", arguments: { labId: fx.lab.id, path: "/x.md", content: "x" } }))
    expect(refused).toMatchObject({ code: "forbidden", status: 403 })
    await reader.close()

    const stranger = await connect(fx.stranger)
    const foreign = failureOf(await stranger.callTool({ name: "read_file", arguments: { labId: fx.lab.id, path: "/agents/plan.md" } }))
    expect(foreign).toMatchObject({ code: "forbidden", status: 403 })
    await stranger.close()

    const writer = await connect(fx.writer)
    expect(failureOf(await writer.callTool({ name: "read_file", arguments: { path: "/nowhere.md" } }))).toMatchObject({ code: "not_found" })
    const bad = failureOf(await writer.callTool({ name: "write_file", arguments: { path: "no-slash", content: 5 } }))
    expect(bad).toMatchObject({ code: "validation_error", message: expect.stringMatching(/^(path|content)/) })
    const extra = failureOf(await writer.callTool({ name: "list_files", arguments: { bogus: 1 } }))
    expect(extra.message).toBe("bogus: is not a known field")
    await expect(writer.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/-32602|unknown tool/)
    await writer.close()
  })

  it("a lab over its plan's rate budget is a tool error saying when to retry; another lab's calls go on", async () => {
    const free = await operatorOf(fx.server).createLab("mcp-free", "free")
    const keyOf = async () => (await fx.createKey(`lab:${free.slug}:rw`)).key
    const [spender, agent] = [await keyOf(), await keyOf()]
    // the budget is the lab's, shared by its keys: one key spends it through REST
    for (let i = 0; i < 60; i++) await (await fx.get("/api/v1/tasks", { labId: free.id }, spender)).body?.cancel()
    const client = await connect(agent)
    const refused = await client.callTool({ name: "list_tasks", arguments: {} })
    const error = failureOf(refused)
    expect(error).toMatchObject({ code: "rate_limited", status: 429, message: expect.stringMatching(/retry in \d+ s/) })
    expect(refused.structuredContent).toMatchObject({ error: { retryAfter: expect.any(Number) } })
    await client.close()
    const other = await connect(fx.writer)
    expect((await other.callTool({ name: "list_tasks", arguments: {} })).isError).toBe(false)
    await other.close()
  })

  it("cuts a result over 25,000 characters, saying so and how to ask for less", async () => {
    const client = await connect(fx.writer)
    const big = "0123456789abcdef\n".repeat(6_000)
    await client.callTool({ name: "write_file", arguments: { path: "/agents/big.md", content: big } })
    const read = await client.callTool({ name: "read_file", arguments: { path: "/agents/big.md" } })
    const text = textOf(read)
    expect(text.length).toBeLessThanOrEqual(25_000)
    expect(read.structuredContent).toMatchObject({ path: "/agents/big.md", truncated: expect.stringMatching(/^content was cut after \d+ of 102000 characters/) })
    await client.close()
  })

  it("lists the lab's files as resources and reads one", async () => {
    const client = await connect(fx.writer)
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates[0]?.uriTemplate).toBe("lab://{slug}/files/{+path}")
    const { resources } = await client.listResources()
    const plan = resources.find((r) => r.name === "/agents/plan.md")
    expect(plan?.uri).toBe(`lab://${fx.lab.slug}/files/agents/plan.md`)
    const read = await client.readResource({ uri: plan?.uri ?? "" })
    expect(read.contents[0]).toMatchObject({ mimeType: "text/markdown", text: "# Plan\n\nstep one\n" })
    await client.close()
  })

  it("answers 401 with WWW-Authenticate naming the protected-resource metadata, which it serves", async () => {
    const missing = await fetch(`${fx.server.baseUrl}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
    })
    expect(missing.status).toBe(401)
    const challenge = missing.headers.get("www-authenticate") ?? ""
    expect(challenge).toMatch(/^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"$/)
    const bad = await fetch(`${fx.server.baseUrl}/mcp`, {
      method: "POST",
      headers: { authorization: "Bearer lsk_nope", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
    })
    expect(bad.status).toBe(401)
    expect(bad.headers.get("www-authenticate")).toMatch(/error="invalid_token"/)
    const metadata = await fetch(`${fx.server.baseUrl}/.well-known/oauth-protected-resource`)
    expect(metadata.status).toBe(200)
    expect(await metadata.json()).toMatchObject({ resource: expect.stringMatching(/\/mcp$/), authorization_servers: [] })
    const get = await fx.server.request("GET", "/mcp", { token: fx.writer })
    expect(get.status).toBe(405)
  })

  it("answers malformed JSON-RPC with protocol errors, never a 5xx", async () => {
    const post = (body: string) => fx.server.request("POST", "/mcp", { token: fx.writer, body, headers: { "content-type": "application/json" } })
    const cases: ReadonlyArray<readonly [string, number]> = [
      ["{", -32700],
      ["[]", -32600],
      ['{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"nope"}', -32601],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}', -32602],
      // percent-decoding past the text rules: a NUL or a lone surrogate in the path
      [`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"lab://${fx.lab.slug}/files/a%00b.md"}}`, -32602],
      [`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"lab://${fx.lab.slug}/files/a%ED%A0%80.md"}}`, -32602]
    ]
    for (const [body, code] of cases) {
      const response = await post(body)
      expect(response.status, body).toBeLessThan(500)
      const answer: unknown = await response.json()
      expect(answer, body).toMatchObject({ jsonrpc: "2.0", error: { code } })
    }
  })
})
