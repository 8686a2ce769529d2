/**
 * Stopping the deployment (a real `src/main.ts` process, PGlite, git on disk) while it pushes to a real git host:
 * 1,500 writes queued while the host was down, the host back, the push in flight (held by the host), a forced sync
 * waiting behind it with no client timeout, then SIGTERM. The forced sync is answered 503 with Retry-After, the
 * process exits within the documented bound, and a restart lands every write exactly once.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type GitServer, startGitServer, workingCopy } from "../support/GitServer.js"
import { freePort, startService } from "../support/ServiceProcess.js"

const run = promisify(execFile)
const WRITES = 1_500
/** README "Workers": jobs in progress get 10 s to end at a chunk boundary; then they are cut and the process exits. */
const STOP_BOUND_MS = 10_000 + 5_000

const adminKey = async (dataDir: string) => (await readFile(join(dataDir, "admin-key"), "utf8")).trim()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const until = async (what: string, done: () => Promise<boolean> | boolean, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(100)
  }
}

let git: GitServer
let base: string
beforeAll(async () => {
  git = await startGitServer()
  base = await mkdtemp(join(tmpdir(), "lab-stop-"))
})
afterAll(async () => {
  await git.close()
  await rm(base, { recursive: true, force: true })
})

describe("SIGTERM while a push runs", () => {
  it("answers a forced sync queued behind the push with 503, exits within 15 s, and a restart lands every write once", { timeout: 240_000 }, async () => {
    const repo = await git.createRepo("stop")
    const wc = await workingCopy(repo)
    await writeFile(join(wc.dir, "README.md"), "# stop\n")
    await wc.commitAndPush("first")
    await wc.remove()
    const dataDir = join(base, "data")
    const port = await freePort()
    const service = await startService(dataDir, port)
    try {
      expect((await service.call("POST", "/api/v1/labs", { slug: "stop", name: "Stop", plan: "team" })).status).toBe(201)
      expect((await service.call("PATCH", "/api/v1/sync", { labId: "stop", repo, autoPushOnEdit: true })).status).toBe(200)
      expect((await service.call("POST", "/api/v1/sync", { labId: "stop" })).status).toBe(200)

      // the host is down while the writes are acknowledged
      git.failWith(503, Number.POSITIVE_INFINITY)
      for (let start = 0; start < WRITES; start += 10) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            service.call("POST", "/api/v1/files", { labId: "stop", path: `/notes/n${start + i}.md`, content: `note ${start + i}\n` })
          )
        )
        expect(answers.map((a) => a.status).filter((s) => s !== 201)).toEqual([])
      }
      // back up, but the push the worker starts is held by the host (a push in flight)
      const release = git.holdReceivePack()
      git.failWith(503, 0)
      await until("the worker's push reaches the host", () => git.heldPushes() > 0, 30_000)

      // a forced sync from a client without timeout, queued behind that push
      const forced = fetch(`http://127.0.0.1:${port}/api/v1/sync`, {
        method: "POST",
        headers: { authorization: `Bearer ${await adminKey(dataDir)}`, "content-type": "application/json" },
        body: JSON.stringify({ labId: "stop" })
      })
      await sleep(500)
      const stoppedAt = Date.now()
      service.child.kill("SIGTERM")
      const answer = await forced
      const answeredIn = Date.now() - stoppedAt
      expect(answer.status).toBe(503)
      expect(answer.headers.get("retry-after")).toBe("5")
      const body = (await answer.json()) as { error: { code: string; message: string; status: number } }
      // the worker's answer, not the closed server's: the request was queued behind the push
      expect(body.error).toMatchObject({ code: "service_unavailable", status: 503 })
      expect(body.error.message).toMatch(/stopping; retry the sync/)
      expect(answeredIn).toBeLessThan(2_000)
      const code = await Promise.race([service.exited, sleep(STOP_BOUND_MS + 15_000).then(() => "still running")])
      const exitedIn = Date.now() - stoppedAt
      expect(code).toBe(0)
      expect(exitedIn).toBeLessThanOrEqual(STOP_BOUND_MS)
      console.log(`forced sync answered ${answeredIn} ms after SIGTERM; process exited after ${exitedIn} ms`)
      // the host now answers the push it held, whose sender is gone
      release()
    } finally {
      if (service.child.exitCode === null) service.child.kill("SIGKILL")
    }

    // a restart pushes what is left: every write exactly once
    const again = await startService(dataDir, port)
    try {
      await until("the outbox is drained", async () => {
        const status = (await (await again.call("GET", "/api/v1/sync?labId=stop")).json()) as { pendingCommits: number }
        return status.pendingCommits === 0
      }, 120_000)
      const { stdout } = await run("git", ["--git-dir", join(git.root, "stop.git"), "log", "--format=%ae %s", "main"], { maxBuffer: 64 * 1024 * 1024 })
      const commits = stdout.split("\n").filter((l) => l.startsWith("lab-service@"))
      expect(commits.length).toBe(WRITES)
      expect(new Set(commits).size).toBe(WRITES)
      // the contract lists the 503 of POST /sync
      const spec = (await (await again.call("GET", "/api/v1/openapi.json")).json()) as {
        paths: Record<string, { post?: { responses?: Record<string, unknown> } }>
      }
      expect(Object.keys(spec.paths["/api/v1/sync"]?.post?.responses ?? {})).toEqual(expect.arrayContaining(["200", "502", "503"]))
    } finally {
      again.child.kill("SIGTERM")
      await again.exited
    }
  })
})
