/**
 * Issue 21 item 20: a file git counts as text (no NUL in its first 8,000 bytes) with a NUL later on cannot be stored
 * (PostgreSQL text holds no NUL). It is counted under `skipped`, and the pull's activity says which file and why
 * (`sync.skipped`), as `figure.synced` does for figures; likewise invalid UTF-8 and files over 1 MiB. Binary files by
 * git's own rule are not listed. Against a real git server, on PGlite and (with DATABASE_URL) PostgreSQL.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { diskGit } from "../support/DiskGit.js"
import { type GitServer, startGitServer } from "../support/GitServer.js"
import { freshDatabase } from "../support/LabFixture.js"
import { linkedLab } from "../support/SyncServer.js"
import { put, userOf } from "../support/SyncSupport.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

const url = process.env["DATABASE_URL"]
const databases = [["PGlite", undefined], ...(url ? [["PostgreSQL", url] as const] : [])] as const

const MiB = 1_048_576

describe.each(databases)("files the lab cannot hold, on %s", (_name, databaseUrl) => {
  let git: GitServer
  let server: TestServer
  let root: string
  let drop = async () => {}

  beforeAll(async () => {
    git = await startGitServer()
    root = await mkdtemp(join(tmpdir(), "lab-skipped-files-"))
    const db = await freshDatabase(databaseUrl)
    drop = db.drop
    server = await startTestServer({ ...db.settings, git: diskGit(root, 10_000) })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await git?.close()
    await drop()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it("counts a text file with a late NUL under skipped, and the pull's activity says which and why", { timeout: 90_000 }, async () => {
    const user = userOf(server, server.adminKey)
    const lateNul = `${"a".repeat(9_000)}\0b\n`
    const { wc, labId } = await linkedLab(git, user, {
      slug: "skipped-files",
      name: "acme/skipped",
      files: { "README.md": "hello\n", "data/log.txt": "was text\n" },
      autoPushOnEdit: false
    })
    expect(await user.paths(labId)).toEqual(["/README.md", "/data/log.txt"])

    await put(wc.dir, "data/late-nul.txt", lateNul)
    await put(wc.dir, "data/log.txt", `${"x".repeat(8_500)}\0later\n`) // was text, now not storable: removed
    await put(wc.dir, "data/latin1.csv", Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    await put(wc.dir, "data/big.txt", `${"b".repeat(MiB)}\n`)
    await put(wc.dir, "bin/early-nul.dat", "ab\0cd\n") // binary by git's rule: skipped, not listed
    await put(wc.dir, "notes/ok.md", "# ok\n")
    const head = await wc.commitAndPush("files the lab cannot hold")
    // git itself calls the late-NUL file text
    expect(await wc.git("diff", "--numstat", "HEAD~1", "HEAD", "--", "data/late-nul.txt")).toMatch(/^1\t0\tdata\/late-nul\.txt$/)

    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 1, updated: 0, skipped: 5, removed: 1, sha: head })
    expect(await user.paths(labId)).toEqual(["/README.md", "/notes/ok.md"])

    const entries = (await user.activity(labId)).filter((a) => a.kind === "sync.skipped")
    expect(entries).toHaveLength(1)
    const [entry] = entries
    expect(entry?.ref).toBe(head)
    expect(entry?.data).toEqual({
      count: 4,
      sha: head.slice(0, 7),
      files: expect.arrayContaining([
        { path: "/data/late-nul.txt", reason: expect.stringMatching(/NUL byte at offset 9000.*git counts it as text/) },
        { path: "/data/log.txt", reason: expect.stringMatching(/NUL byte at offset 8500/) },
        { path: "/data/latin1.csv", reason: expect.stringMatching(/not valid UTF-8/) },
        { path: "/data/big.txt", reason: expect.stringMatching(/larger than 1 MiB \(1048577 bytes/) }
      ])
    })
    expect(entry?.data["files"]).toHaveLength(4)
    expect(entry?.message).toMatch(/^Skipped 4 files the lab cannot hold \([0-9a-f]{7}\): /)

    // nothing new: no further entry
    expect(await user.syncNow(labId)).toMatchObject({ skipped: 0, sha: head })
    expect((await user.activity(labId)).filter((a) => a.kind === "sync.skipped")).toHaveLength(1)
  })
})
