/**
 * Issue 21 items 6, 7 and 8: git hosts that fail in particular ways, over real HTTP on loopback.
 * - 6: a host sends a pack missing a blob, then is repaired: the lab heals by itself (before, it asked for the ref
 *   list only, saw the tip it already had, and failed on the missing blob for good).
 * - 7: a host answers every other request 503: a fetch retries the failed request, and the forced sync answers.
 * - 8: each failure's `lastError` is a fixed, true description: a stalled ref advertisement, a host answering
 *   "not our ref", a missing object (no object id quoted).
 * PGlite, and PostgreSQL when DATABASE_URL is set (the sync status lives there).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_INCOMPLETE } from "../../layers/git/GitFailure.js"
import { commit, object, pack, tree } from "../support/CraftedPack.js"
import { diskGit } from "../support/DiskGit.js"
import { type FakeHost, servePack, startFakeHost } from "../support/FakeGitHost.js"
import { type GitServer, startGitServer } from "../support/GitServer.js"
import { freshDatabase } from "../support/LabFixture.js"
import { type StalledHost, startStalledHost } from "../support/StalledHost.js"
import { linkedLab } from "../support/SyncServer.js"
import { put, until, type User, userOf } from "../support/SyncSupport.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

const databases = [
  { name: "PGlite", url: undefined },
  ...(process.env["DATABASE_URL"] ? [{ name: "PostgreSQL", url: process.env["DATABASE_URL"] }] : [])
]

/** Short phase limits, so a stalled host fails within seconds (the deployment's are tens of seconds). */
const PHASES = { connectMillis: 1_000, responseMillis: 2_000, idleMillis: 1_000 }

const pkt = (line: string) => `${(Buffer.byteLength(line) + 4).toString(16).padStart(4, "0")}${line}`

/** A host that advertises `tip` and answers the pack request as git does for a commit it will not send. */
const notOurRef = (tip: string) => (req: IncomingMessage, res: ServerResponse) => {
  if (req.method === "GET" && req.url?.endsWith("/info/refs?service=git-upload-pack")) {
    res.writeHead(200, { "content-type": "application/x-git-upload-pack-advertisement" })
    res.end(`${pkt("# service=git-upload-pack\n")}0000${pkt(`${tip} refs/heads/main\0shallow side-band-64k ofs-delta thin-pack\n`)}0000`)
    return
  }
  res.writeHead(200, { "content-type": "application/x-git-upload-pack-result" })
  res.end(pkt(`ERR upload-pack: not our ref ${tip}`))
}

for (const database of databases) {
  describe(`git hosts that fail (${database.name})`, () => {
    let git: GitServer
    let server: TestServer
    let root: string
    let user: User
    let drop = async () => {}
    const closing: Array<FakeHost | StalledHost> = []

    beforeAll(async () => {
      git = await startGitServer()
      root = await mkdtemp(join(tmpdir(), "lab-host-failures-"))
      const db = await freshDatabase(database.url)
      drop = db.drop
      server = await startTestServer({ ...db.settings, git: diskGit(root, 10_000, { phases: PHASES }) })
      user = userOf(server, server.adminKey)
    })
    afterAll(async () => {
      await server.close()
      await drop()
      await Promise.all(closing.map((host) => host.close()))
      await git.close()
      await rm(root, { recursive: true, force: true })
    })

    /** A new lab linked to `url`, and its sync status once an attempt has failed. */
    const failedLab = async (slug: string, url: string) => {
      const labId = await user.createLab(slug)
      await user.link(labId, url, false)
      const error = await until(async () => (await user.status(labId)).lastError ?? undefined, `lab ${slug} to fail`, 20_000)
      return { labId, message: error.message }
    }

    it("7: a host that answers every other request 503 still syncs, and a forced sync answers", { timeout: 60_000 }, async () => {
      const { wc, labId } = await linkedLab(git, user, { slug: "flaky", name: "flaky", files: { "a.md": "a\n" }, autoPushOnEdit: false })
      await put(wc.dir, "b.md", "b\n")
      const c1 = await wc.commitAndPush("b")
      git.failEveryOther(503)
      try {
        expect((await user.syncNow(labId)).sha).toBe(c1)
      } finally {
        git.failEveryOther(0)
      }
      expect(await user.read(labId, "/b.md")).toMatchObject({ content: "b\n" })
      expect((await user.status(labId)).lastError).toBeNull()
      await wc.remove()
    })

    it("7: a pack cut by a reset is asked for again within the same job: the forced sync answers", { timeout: 60_000 }, async () => {
      const versionOf = (text: string) => {
        const readme = object("blob", Buffer.from(text.repeat(20_000)))
        const top = tree([{ mode: "100644", name: "README.md", id: readme.id }])
        const tip = commit(top.id, text)
        return { tip: tip.id, serve: servePack(tip.id, pack([tip, top, readme])) }
      }
      const first = versionOf("first\n")
      const second = versionOf("second\n")
      let current = first
      let cut = false
      const host = await startFakeHost((req, res) => {
        if (req.method === "POST" && cut) {
          cut = false
          // the answer's start, then the connection dies
          res.writeHead(200, { "content-type": "application/x-git-upload-pack-result" })
          res.write(`${pkt(`shallow ${current.tip}\n`)}0000${pkt("NAK\n")}`)
          setTimeout(() => res.socket?.destroy(), 50)
          return
        }
        current.serve(req, res)
      })
      closing.push(host)
      const labId = await user.createLab("cut")
      await user.link(labId, `${host.origin}/cut.git`, false)
      await user.syncedTo(labId, first.tip)
      current = second
      cut = true
      // a failed job would answer this forced sync 502
      expect((await user.syncNow(labId)).sha).toBe(second.tip)
      expect(cut).toBe(false)
    })

    it("6 and 8: a pack missing a blob fails with a fixed description, and the lab heals once the host is repaired", { timeout: 60_000 }, async () => {
      const alpha = object("blob", Buffer.from("alpha\n"))
      const beta = object("blob", Buffer.from("beta\n"))
      const root = tree([
        { mode: "100644", name: "a.md", id: alpha.id },
        { mode: "100644", name: "b.md", id: beta.id }
      ])
      const tip = commit(root.id)
      let repaired = false
      const host = await startFakeHost((req, res) => servePack(tip.id, pack(repaired ? [tip, root, alpha, beta] : [tip, root, alpha]))(req, res))
      closing.push(host)
      const { labId, message } = await failedLab("incomplete", `${host.origin}/incomplete.git`)
      expect(message).toContain(STORE_INCOMPLETE)
      expect(message).not.toContain(beta.id.slice(0, 6))

      repaired = true
      // no webhook, no forced sync, no relink: the lab's own retries find the whole pack
      await user.syncedTo(labId, tip.id, 20_000)
      expect(await user.read(labId, "/b.md")).toMatchObject({ content: "beta\n" })
      expect((await user.status(labId)).lastError).toBeNull()
    })

    it("8: a ref advertisement that stops mid-way, or never starts, says so", { timeout: 60_000 }, async () => {
      const stops = await startStalledHost("stops")
      const silent = await startStalledHost("silent")
      closing.push(stops, silent)
      const midway = await failedLab("stops", `${stops.origin}/stops.git`)
      expect(midway.message).toContain("the git host stopped sending in the middle of its answer (GIT_IDLE_TIMEOUT_MS)")
      const never = await failedLab("silent", `${silent.origin}/silent.git`)
      expect(never.message).toContain("the git host did not start answering in time (GIT_RESPONSE_TIMEOUT_MS)")
    })

    it("8: a host answering \"not our ref\" says the host refused the commit", { timeout: 60_000 }, async () => {
      const host = await startFakeHost(notOurRef("e8f0531e6b2f1b4d7a1c0a7d0b4c9e2f3a5b6c7d"))
      closing.push(host)
      const { message } = await failedLab("not-our-ref", `${host.origin}/gone.git`)
      expect(message).toContain("the git host refused to send the commit it advertised")
      expect(message).not.toContain("e8f053")
    })
  })
}
