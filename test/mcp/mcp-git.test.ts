/**
 * An agent's write over MCP reaches git as a REST write does: with auto-push on and a real git host (git's own
 * http-backend on loopback), write_file's commit lands in the repository authored by the credential's name, the
 * service as committer; a REST write by another key is authored by that key's name.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type GitServer, workingCopy } from "../support/GitServer.js"
import { CreatedApiKey } from "../../src/auth/ApiKey.js"
import { data, operatorOf } from "../support/LabFixture.js"
import { useSyncServer } from "../support/SyncServer.js"
import type { TestServer } from "../support/TestServer.js"

let git: GitServer
let server: TestServer
useSyncServer("lab-service-mcp-git-", (stage) => {
  ;({ git, server } = stage)
})

const until = async <A>(f: () => Promise<A | undefined>, what: string, timeoutMs = 20_000): Promise<A> => {
  const start = Date.now()
  for (;;) {
    const value = await f()
    if (value !== undefined) return value
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe("MCP writes in git", () => {
  it("write_file's commit is authored by the credential's name, committed by the service", { timeout: 60_000 }, async () => {
    const lab = await operatorOf(server).createLab("mcp-git", "pro")
    const key = async (name: string) =>
      data(
        await server.request("POST", "/api/v1/auth/keys", { token: server.adminKey, json: { name, scopes: [`lab:${lab.slug}:rw`] } }),
        CreatedApiKey,
        201
      )
    const agent = await key("planning-agent")
    const human = await key("Ada Lovelace")
    const url = await git.createRepo("mcp-git")
    const wc = await workingCopy(url)
    await writeFile(join(wc.dir, "README.md"), "hello\n")
    await wc.commitAndPush("first")
    const link = await server.request("PATCH", "/api/v1/sync", { token: server.adminKey, json: { labId: lab.id, repo: url, autoPushOnEdit: true } })
    expect(link.status).toBe(200)

    const client = new Client({ name: "mcp-git-test", version: "1.0.0" })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.key}` } } })
    )
    const written = await client.callTool({ name: "write_file", arguments: { path: "/notes/agent.md", content: "from the agent\n" } })
    expect(written.isError).toBe(false)
    await client.close()
    const rest = await server.request("POST", "/api/v1/files", { token: human.key, json: { labId: lab.id, path: "/notes/human.md", content: "by hand\n" } })
    expect(rest.status).toBe(201)

    const log = await until(async () => {
      await wc.pull().catch(() => undefined)
      const lines = (await wc.git("log", "--format=%an|%cn|%s", "-n", "3")).split("\n")
      return lines.some((l) => l.includes("human.md")) && lines.some((l) => l.includes("agent.md")) ? lines : undefined
    }, "both writes in the repository")
    expect(log).toContain("planning-agent|Lab Service|Update notes/agent.md")
    expect(log).toContain("Ada Lovelace|Lab Service|Update notes/human.md")
    await wc.remove()
  })
})
