/**
 * When the watched free space climbs back above the reserve, every linked lab is asked to pull: a push made on the
 * host while the disk was low (whose webhook went unsent or was lost) reaches the lab without another delivery. The
 * watch reads a source of free bytes the test sets (src/status/DiskSpace.ts); git is on disk against a real git server.
 */
import { Duration, Effect, Option } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as DiskSpace from "../../src/status/DiskSpace.js"
import { diskGit } from "../support/DiskGit.js"
import { startGitServer } from "../support/GitServer.js"
import { linkedLab } from "../support/SyncServer.js"
import { put, SETTLE_MS, sleep, until, userOf } from "../support/SyncSupport.js"
import { startTestServer } from "../support/TestServer.js"

const MIB = 1024 * 1024
const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

describe("space returning", () => {
  it("asks every linked lab to pull: a push made while the disk was low arrives without a webhook", { timeout: 60_000 }, async () => {
    const git = await startGitServer()
    cleanups.push(git.close)
    const root = await mkdtemp(join(tmpdir(), "lab-disk-recovery-"))
    cleanups.push(() => rm(root, { recursive: true, force: true }))
    let free = 500 * MIB
    const disk = DiskSpace.layer({ freeBytes: Effect.sync(() => Option.some(free)), reserveBytes: 256 * MIB, every: Duration.millis(100) })
    const server = await startTestServer({ git: diskGit(root), disk: { layer: disk } })
    cleanups.push(server.close)
    const user = userOf(server, server.adminKey)
    const repo = { slug: "recovery", name: "acme/recovery", files: { "README.md": "# r\n" }, autoPushOnEdit: false }
    const { wc, labId } = await linkedLab(git, user, repo)

    free = 100 * MIB
    await until(async () => ((await server.request("GET", "/readyz")).status === 503 ? true : undefined), "/readyz to say the disk is low", 5_000, 50)
    // a push on the host that the service hears nothing of (no webhook)
    await put(wc.dir, "notes/low.md", "while low\n")
    const c1 = await wc.commitAndPush("while low")
    await sleep(SETTLE_MS)
    expect((await user.status(labId)).lastSyncSha).not.toBe(c1)

    free = 500 * MIB
    await user.syncedTo(labId, c1, 10_000)
    expect((await user.read(labId, "/notes/low.md"))?.content).toBe("while low\n")
  })
})
