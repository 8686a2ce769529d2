import { execFile } from "node:child_process"
import fs from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { DEFAULT_CEILINGS, fetchInto } from "../../layers/git/Fetch.js"
import { openObjectReader } from "../../layers/git/PackReader.js"
import { describeFailure } from "../../layers/git/GitFailure.js"
import { makePackSink, type PackSink } from "../../layers/git/PackSink.js"
import { makeTransport, systemResolve, TransportError } from "../../layers/git/Transport.js"
import { advertisement, fetchPack } from "../../layers/git/UploadPack.js"
import { isDiskFull } from "../../src/db/DiskFull.js"
import { GitError } from "../../src/sync/Git.js"
import { LOOPBACK } from "../support/DiskGit.js"
import { workingCopy, type GitServer } from "../support/GitServer.js"
import { useGitServer } from "../support/SyncServer.js"

/** The native fetch (layers/git/Fetch.ts, UploadPack.ts, PackIndexer.ts), checked by git's own tools. */
const run = promisify(execFile)
let server: GitServer
let root: string
useGitServer("lab-shallow-", (started, scratch) => {
  server = started
  root = scratch
})
afterAll(() => transport.close())

const bareRepo = async (name: string) => {
  const gitdir = join(root, `${name}.git`)
  await run("git", ["init", "--bare", "--quiet", gitdir])
  return gitdir
}
const transport = makeTransport({ allowed: LOOPBACK, resolve: systemResolve })
const shallowClone = (request: { readonly gitdir: string; readonly url: string; readonly branch: string }) =>
  fetchInto({
    ...request,
    transport,
    token: undefined,
    timeoutMillis: 10_000,
    ceilings: DEFAULT_CEILINGS,
    store: openObjectReader(request.gitdir)
  })

const gitIn = async (gitdir: string, ...args: ReadonlyArray<string>) =>
  (await run("git", [`--git-dir=${gitdir}`, ...args], { maxBuffer: 64 << 20 })).stdout

describe("native fetch", () => {
  it("stores the branch tip as git would: a pack git verifies, its index, the shallow mark and the remote ref", async () => {
    const url = await server.createRepo("deltas")
    const wc = await workingCopy(url)
    // similar files, so the pack holds deltas; two commits, so depth 1 matters
    const paragraph = "A paragraph of notes that repeats across files, so git stores most of them as deltas.\n".repeat(40)
    for (let i = 0; i < 60; i++) {
      fs.mkdirSync(join(wc.dir, `notes/${i % 6}`), { recursive: true })
      fs.writeFileSync(join(wc.dir, `notes/${i % 6}/n${i}.md`), `${paragraph}note ${i}\n`)
    }
    await wc.commitAndPush("first")
    fs.writeFileSync(join(wc.dir, "notes/0/n0.md"), "rewritten\n")
    const tip = await wc.commitAndPush("second")

    const gitdir = await bareRepo("deltas-clone")
    const cloned = await shallowClone({ gitdir, url, branch: "main" })
    expect(cloned?.tip).toBe(tip)
    expect(await readFile(join(gitdir, "shallow"), "utf8")).toBe(`${tip}\n`)
    expect(await readFile(join(gitdir, "refs/remotes/origin/main"), "utf8")).toBe(`${tip}\n`)

    const packs = fs.readdirSync(join(gitdir, "objects/pack")).filter((f) => f.endsWith(".idx"))
    expect(packs).toHaveLength(1)
    const verify = await gitIn(gitdir, "verify-pack", "-v", join(gitdir, "objects/pack", packs[0] ?? ""))
    // deltas were there to resolve (verify-pack lists a chain length histogram only when some exist)
    expect(verify).toMatch(/chain length = 1: \d+ objects?/)
    await gitIn(gitdir, "fsck", "--full", "--strict")
    // every file of the tip (and only the tip: the first commit's n0.md is not there), read natively as git reads it
    const listing = (await gitIn(gitdir, "ls-tree", "-r", tip)).trim().split("\n")
    expect(listing).toHaveLength(60)
    const reader = openObjectReader(gitdir)
    for (const line of listing) {
      const oid = line.split(/\s+/)[2] ?? ""
      const blob = await gitIn(gitdir, "cat-file", "blob", oid)
      expect(reader.read(oid)?.content.toString("utf8")).toBe(blob)
      // the objects the clone hands on for the first sync's reads
      expect(cloned?.objects.get(oid)?.content.toString("utf8")).toBe(blob)
    }
    reader.close()
    await expect(gitIn(gitdir, "cat-file", "-e", `${tip}~1`)).rejects.toThrow()
    await wc.remove()
  })

  it("answers undefined for a branch the repository does not have, and for an empty repository", async () => {
    const url = await server.createRepo("branches")
    const gitdir = await bareRepo("branches-clone")
    expect(await shallowClone({ gitdir, url, branch: "main" })).toBeUndefined()
    const wc = await workingCopy(url)
    fs.writeFileSync(join(wc.dir, "a.md"), "a\n")
    await wc.commitAndPush("on main")
    expect(await shallowClone({ gitdir, url, branch: "research/drafts" })).toBeUndefined()
    await wc.git("checkout", "--quiet", "-b", "research/drafts")
    const drafts = await wc.commitAndPush("on drafts", "research/drafts")
    expect((await shallowClone({ gitdir, url, branch: "research/drafts" }))?.tip).toBe(drafts)
    expect(await readFile(join(gitdir, "refs/remotes/origin/research/drafts"), "utf8")).toBe(`${drafts}\n`)
    await wc.remove()
  })

  it("fails with the host's status when it refuses: at once for a 404, after three tries for a 503", async () => {
    const url = await server.createRepo("down")
    server.failWith(404, 1)
    await expect(shallowClone({ gitdir: await bareRepo("gone-clone"), url, branch: "main" })).rejects.toThrow(/404/)
    const before = server.requests().length
    server.failWith(503, 3)
    await expect(shallowClone({ gitdir: await bareRepo("down-clone"), url, branch: "main" })).rejects.toThrow(/503/)
    expect(server.requests().length - before).toBe(3)
  })

  it("a pack the local disk cannot take (ENOSPC from the sink) is the store's failure: not a transient host failure", async () => {
    const url = await server.createRepo("full-disk")
    const wc = await workingCopy(url)
    fs.writeFileSync(join(wc.dir, "a.md"), "a\n")
    const tip = await wc.commitAndPush("one")
    const target = { transport, url, branch: "main", headers: {}, signal: new AbortController().signal }
    const advertised = await advertisement(target)
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" })
    const sink: PackSink = {
      ...makePackSink(root, { maxPackBytes: 1 << 30, maxObjects: 1_000_000 }),
      write: () => {
        throw enospc
      }
    }
    const failure = await fetchPack(target, advertised, { tip, have: undefined, shallow: [], depth: 1 }, sink).then(
      () => undefined,
      (cause: unknown) => cause
    )
    expect(failure).toBe(enospc)
    expect(failure).not.toBeInstanceOf(TransportError)
    expect(describeFailure(failure)).toBe("the lab's git store failed (ENOSPC)")
    // as GitDisk.ts reports it: the disk-full mapping sees it (a forced sync answers 507, not 502)
    expect(isDiskFull(new GitError({ message: "fetch: the lab's git store failed (ENOSPC)", cause: failure }))).toBe(true)
    await wc.remove()
  })
})
