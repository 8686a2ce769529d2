/**
 * Stopping the deployment (a real `src/main.ts` process, PGlite, git on disk) while it pushes to a real git host:
 * 1,500 writes queued while the host was down, the host back, the push in flight (held by the host), a forced sync
 * waiting behind it with no client timeout, then SIGTERM. The forced sync is answered 503 with Retry-After, the
 * process exits within the documented bound, and a restart lands every write exactly once.
 */
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type GitServer, workingCopy } from "../support/GitServer.js"
import { expectError } from "../support/http.js"
import { startServiceProcess } from "../support/ServiceProcess.js"
import { bareGit, fixedKeys, sleep, until, userOf } from "../support/SyncSupport.js"
import { useGitServer } from "../support/SyncServer.js"

const WRITES = 1_500
/** README "Workers": jobs in progress get 10 s to end at a chunk boundary; then they are cut and the process exits. */
const STOP_BOUND_MS = 10_000 + 5_000

let git: GitServer
let base: string
useGitServer("lab-stop-", (started, root) => {
  git = started
  base = root
})

describe("SIGTERM while a push runs", () => {
  it("answers a forced sync queued behind the push with 503, exits within 15 s, and a restart lands every write once", { timeout: 240_000 }, async () => {
    const repo = await git.createRepo("stop")
    const wc = await workingCopy(repo)
    await writeFile(join(wc.dir, "README.md"), "# stop\n")
    await wc.commitAndPush("first")
    await wc.remove()
    const keys = fixedKeys()
    const settings = { dataDir: join(base, "data"), adminKey: keys.adminKey, masterKey: keys.masterKey }
    const service = await startServiceProcess(settings)
    const user = userOf(service, keys.adminKey)
    try {
      const labId = await user.createLab("stop")
      await user.link(labId, repo, true)
      await user.syncNow(labId)

      // the host is down while the writes are acknowledged
      git.failWith(503, Number.POSITIVE_INFINITY)
      for (let start = 0; start < WRITES; start += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, i) => user.writeOk(labId, `/notes/n${start + i}.md`, `note ${start + i}\n`, 201)))
      }
      // back up, but the push the worker starts is held by the host (a push in flight)
      const release = git.holdReceivePack()
      git.failWith(503, 0)
      await until(async () => (git.heldPushes() > 0 ? true : undefined), "the worker's push to reach the host", 30_000)

      // a forced sync from a client without timeout, queued behind that push
      const forced = user.call("POST", "/api/v1/sync", { labId })
      await sleep(500)
      const stoppedAt = Date.now()
      const exiting = service.stop("SIGTERM")
      const answer = await forced
      const answeredIn = Date.now() - stoppedAt
      expect(answer.headers.get("retry-after")).toBe("5")
      // the worker's answer, not the closed server's: the request was queued behind the push
      expect(await expectError(answer, 503, "service_unavailable")).toMatch(/stopping; retry the sync/)
      expect(answeredIn).toBeLessThan(2_000)
      const code = await Promise.race([exiting, sleep(STOP_BOUND_MS + 15_000).then(() => "still running")])
      const exitedIn = Date.now() - stoppedAt
      expect(code).toBe(0)
      expect(exitedIn).toBeLessThanOrEqual(STOP_BOUND_MS)
      console.log(`forced sync answered ${answeredIn} ms after SIGTERM; process exited after ${exitedIn} ms`)
      // the host now answers the push it held, whose sender is gone
      release()

      // a restart pushes what is left: every write exactly once
      const again = await startServiceProcess(settings)
      try {
        await userOf(again, keys.adminKey).pushed(labId, 120_000)
        const commits = (await bareGit(git.root, "stop")("log", "--format=%ce %s", "main")).split("\n").filter((l) => l.startsWith("lab-service@"))
        expect(commits.length).toBe(WRITES)
        expect(new Set(commits).size).toBe(WRITES)
      } finally {
        await again.stop("SIGTERM")
      }
    } finally {
      await service.stop("SIGKILL")
    }
  })
})
