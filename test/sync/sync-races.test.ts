import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as GitDisk from "../../layers/git/GitDisk.js"
import { LOOPBACK } from "../support/DiskGit.js"
import { freshDatabase } from "../support/LabFixture.js"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { pausingGit } from "../support/PausingGit.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { put, type User, userOf } from "../support/SyncSupport.js"

/**
 * Issue: "an acknowledged write can vanish from the lab for good". A pull
 * reads the paths it will change, then reads blobs, then writes; a write
 * acknowledged in between must win. The race is made deterministic: the git
 * layer stops the pull at its first blob read, the test writes through the
 * API, then lets the pull go on.
 */
const databases = [
  { name: "PGlite", url: undefined },
  ...(process.env["DATABASE_URL"] ? [{ name: "PostgreSQL", url: process.env["DATABASE_URL"] }] : [])
]

for (const database of databases) {
  describe(`races between a pull and the files API (${database.name})`, () => {
    let git: GitServer
    let server: TestServer
    let gitRoot: string
    let user: User
    let drop = async () => {}
    let pausing: ReturnType<typeof pausingGit>

    beforeAll(async () => {
      git = await startGitServer()
      gitRoot = await mkdtemp(join(tmpdir(), "lab-sync-races-"))
      pausing = pausingGit(GitDisk.layer({ root: gitRoot, timeoutMillis: 10_000, allowedHosts: LOOPBACK }))
      const db = await freshDatabase(database.url)
      drop = db.drop
      server = await startTestServer({ ...db.settings, git: { kind: "layer", layer: pausing.layer } })
      user = userOf(server, server.adminKey)
    })
    afterAll(async () => {
      await server.close()
      await drop()
      await git.close()
      await rm(gitRoot, { recursive: true, force: true })
    })

    const pauseAt = (moment: "readBlob" | "push") => pausing.pauseAt(moment)

    /** A lab with auto-push on, linked to a repository holding X.md and ten other files, synced. */
    const linkedLab = async (slug: string) => {
      const url = await git.createRepo(slug)
      const wc = await workingCopy(url)
      await put(wc.dir, "X.md", "x v1\n")
      for (let i = 0; i < 10; i++) await put(wc.dir, `d/p${i}.md`, `p${i} v1\n`)
      const c0 = await wc.commitAndPush("first")
      const labId = await user.createLab(slug)
      await user.link(labId, url, true)
      await user.syncedTo(labId, c0)
      return { wc, labId }
    }

    /** Every file of the lab and of the remote branch, path -> blob id: equal once the sync is quiet. */
    const lab = async (labId: string) => Object.fromEntries((await user.files(labId)).map((f) => [f.path, f.sha]))
    const remote = async (wc: Awaited<ReturnType<typeof workingCopy>>) => {
      await wc.git("fetch", "--quiet", "origin")
      const listing = await wc.git("ls-tree", "-r", "origin/main")
      return Object.fromEntries(
        listing.split("\n").filter((l) => l !== "").map((line) => {
          const [meta = "", path = ""] = line.split("\t")
          return [`/${path}`, meta.split(" ")[2] ?? ""]
        })
      )
    }

    /** Change files from outside, then run a pull that stops at its first blob read while `during` acts. */
    const racePull = async (labId: string, during: () => Promise<void>) => {
      const pause = pauseAt("readBlob")
      const pulling = user.syncNow(labId)
      await pause.reached
      await during()
      pause.release()
      await pulling
      await user.pushed(labId)
    }

    describe("a write acknowledged while a pull runs", { timeout: 60_000 }, () => {
      it("is not overwritten by the pull: the lab and the repository end with it", async () => {
        const { wc, labId } = await linkedLab("race-write")
        await put(wc.dir, "X.md", "x outside\n")
        for (let i = 0; i < 10; i++) await put(wc.dir, `d/p${i}.md`, `p${i} v2\n`)
        await wc.commitAndPush("outside change")
        await racePull(labId, async () => {
          await user.writeOk(labId, "/X.md", "x api\n", 200)
        })
        expect((await user.read(labId, "/X.md"))?.content).toBe("x api\n")
        expect(await lab(labId)).toEqual(await remote(wc))
        // nothing left apart: a forced sync finds nothing to change
        expect(await user.syncNow(labId)).toMatchObject({ pulled: 0, updated: 0, removed: 0 })
        expect((await user.status(labId)).lastError).toBeNull()
      })

      it("a delete is not undone by the pull bringing the file back", async () => {
        const { wc, labId } = await linkedLab("race-delete")
        await put(wc.dir, "X.md", "x outside\n")
        await wc.commitAndPush("outside change")
        await racePull(labId, async () => {
          await user.removeOk(labId, "/X.md")
        })
        expect(await user.read(labId, "/X.md")).toBeUndefined()
        expect(await lab(labId)).toEqual(await remote(wc))
        expect((await remote(wc))["/X.md"]).toBeUndefined()
      })

      it("an outside delete does not take away a write acknowledged meanwhile", async () => {
        const { wc, labId } = await linkedLab("race-outside-delete")
        await rm(join(wc.dir, "X.md"))
        await put(wc.dir, "d/p0.md", "p0 v2\n")
        await wc.commitAndPush("outside delete")
        await racePull(labId, async () => {
          await user.writeOk(labId, "/X.md", "x api\n", 200)
        })
        expect((await user.read(labId, "/X.md"))?.content).toBe("x api\n")
        expect(await lab(labId)).toEqual(await remote(wc))
      })
    })
  })
}
