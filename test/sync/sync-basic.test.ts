import { Option } from "effect"
import { createHmac } from "node:crypto"
import { writeFile, mkdir } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { workingCopy, type GitServer } from "../support/GitServer.js"
import { operatorOf } from "../support/LabFixture.js"
import type { TestServer } from "../support/TestServer.js"
import { useSyncServer } from "../support/SyncServer.js"

let git: GitServer
let server: TestServer

useSyncServer("lab-service-git-", (stage) => {
  ;({ git, server } = stage)
})

const until = async <A>(f: () => Promise<A | undefined>, what: string, timeoutMs = 15_000): Promise<A> => {
  const start = Date.now()
  for (;;) {
    const value = await f()
    if (value !== undefined) return value
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("sync smoke", () => {
  it("pulls a pushed tree after a signed GitHub webhook, and auto-pushes a write", async () => {
    const admin = server.adminKey
    const labId = (await operatorOf(server).createLab("sync-a", "pro")).id
    const url = await git.createRepo("sync-a")
    const wc = await workingCopy(url)
    await mkdir(join(wc.dir, "notes"), { recursive: true })
    await writeFile(join(wc.dir, "notes", "a.md"), "# A\n")
    await writeFile(join(wc.dir, "README.md"), "hello\n")
    const first = await wc.commitAndPush("first")

    const link = await server.request("PATCH", "/api/v1/sync", { token: admin, json: { labId, repo: url, autoPushOnEdit: true } })
    expect(link.status).toBe(200)
    const secretRes = await server.request("POST", "/api/v1/sync/secret", { token: admin, json: { labId } })
    const secret = ((await secretRes.json()) as { secret: string }).secret
    expect(secret).toMatch(/^[0-9a-f]{64}$/)

    await until(async () => {
      const r = await server.request("GET", `/api/v1/files?labId=${labId}&path=/notes/a.md`, { token: admin })
      return r.status === 200 ? true : undefined
    }, "initial pull")

    const status1 = (await (await server.request("GET", `/api/v1/sync?labId=${labId}`, { token: admin })).json()) as { lastSyncSha: string }
    expect(status1.lastSyncSha).toBe(first)

    await writeFile(join(wc.dir, "notes", "b.md"), "# B\n")
    const second = await wc.commitAndPush("second")
    const body = JSON.stringify({ ref: "refs/heads/main", after: second, repository: { clone_url: url, full_name: "sync-a" } })
    const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`
    const hook = await fetch(`${server.baseUrl}/api/webhooks/github`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "d-1", "x-hub-signature-256": signature },
      body
    })
    expect(hook.status).toBe(202)
    await until(async () => {
      const r = await server.request("GET", `/api/v1/files?labId=${labId}&path=/notes/b.md`, { token: admin })
      return r.status === 200 ? true : undefined
    }, "webhook pull")

    const write = await server.request("POST", "/api/v1/files", { token: admin, json: { labId, path: "/notes/c.md", content: "from api\n" } })
    expect(write.status).toBe(201)
    await until(async () => {
      const s = (await (await server.request("GET", `/api/v1/sync?labId=${labId}`, { token: admin })).json()) as { pendingCommits: number; lastError: unknown }
      return s.pendingCommits === 0 ? s : undefined
    }, "auto-push")
    await wc.pull()
    expect(await wc.git("show", "HEAD:notes/c.md")).toBe("from api")
    expect(await wc.git("log", "-1", "--format=%cn <%ce>%n%an <%ae>%n%s")).toBe(
      "Lab Service <lab-service@users.noreply.local>\ninstance operator <admin@users.noreply.local>\nUpdate notes/c.md"
    )
    void Option.none()
  })
})
