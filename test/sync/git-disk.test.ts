import { Effect, ManagedRuntime, Option } from "effect"
import { execFile } from "node:child_process"
import fs from "node:fs"
import { mkdtemp, readdir, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as GitDisk from "../../layers/git/GitDisk.js"
import * as Iso from "../../layers/git/IsoOps.js"
import { openObjectReader } from "../../layers/git/PackReader.js"
import { Git, type GitChange } from "../../src/sync/Git.js"
import { LOOPBACK } from "../support/DiskGit.js"
import { workingCopy, type GitServer } from "../support/GitServer.js"
import { useGitServer } from "../support/SyncServer.js"

/**
 * The on-disk git layer's accelerators (layers/git/PackReader.ts, the fast diff
 * in IsoOps.ts, thin-pack fetches in Fetch.ts) against the git CLI and
 * isomorphic-git's own code paths.
 */
const run = promisify(execFile)
const env = { ...process.env, GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@b.c", GIT_COMMITTER_NAME: "a", GIT_COMMITTER_EMAIL: "a@b.c" }

let dir: string
const git = async (...args: ReadonlyArray<string>) => (await run("git", [...args], { cwd: dir, env, maxBuffer: 64 << 20 })).stdout.trim()
const write = (path: string, content: string) => {
  fs.mkdirSync(join(dir, path, ".."), { recursive: true })
  fs.writeFileSync(join(dir, path), content)
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lab-git-disk-"))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/** Two commits covering the kinds of change a diff meets; returns their ids. */
const history = async () => {
  await git("init", "--quiet")
  for (let i = 0; i < 40; i++) write(`bulk/f${i}.md`, `${"line of text\n".repeat(50)}${i}\n`)
  write("a", "file a")
  write("b/x.md", "x")
  write("b/y.md", "y")
  write("d/sub/deep/z.txt", "z")
  write("d/other.txt", "o")
  write("e.sh", "echo")
  write("gone/g", "g")
  write("m", "mode")
  fs.symlinkSync("a", join(dir, "link"))
  await git("add", "-A")
  await git("update-index", "--add", "--cacheinfo", `160000,${"1".repeat(40)},module`)
  await git("commit", "--quiet", "-m", "one")
  const one = await git("rev-parse", "HEAD")
  fs.rmSync(join(dir, "a"))
  write("a/inner.md", "a is a directory now")
  fs.rmSync(join(dir, "b"), { recursive: true })
  write("b", "b is a file now")
  write("d/sub/deep/z.txt", "z2")
  write("d/new.txt", "n")
  fs.rmSync(join(dir, "gone"), { recursive: true })
  fs.chmodSync(join(dir, "m"), 0o755)
  write("bulk/f7.md", `${"line of text\n".repeat(50)}changed\n`)
  write("ü ñ.md", "unicode")
  await git("add", "-A")
  await git("update-index", "--add", "--cacheinfo", `160000,${"2".repeat(40)},module`)
  await git("commit", "--quiet", "-m", "two")
  return { one, two: await git("rev-parse", "HEAD") }
}

const sorted = (changes: ReadonlyArray<GitChange>) =>
  [...changes]
    .map((c) => [c.path, Option.getOrNull(c.before), Option.getOrNull(c.after)] as const)
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))

describe("on-disk git layer", () => {
  it("reads every object as git does, loose and packed (deltas included), and diffs as isomorphic-git's walk does", async () => {
    const { one, two } = await history()
    const gitdir = join(dir, ".git")
    const check = async () => {
      const reader = openObjectReader(gitdir)
      const listing = (await git("cat-file", "--batch-all-objects", "--batch-check")).split("\n")
      for (const line of listing) {
        const [oid = "", type, size] = line.split(" ")
        const object = reader.read(oid)
        expect(object?.type, oid).toBe(type)
        expect(object?.content.length, oid).toBe(Number(size))
        if (type === "blob") expect(object?.content.toString("latin1")).toBe((await run("git", ["cat-file", "blob", oid], { cwd: dir, encoding: "latin1" })).stdout)
      }
      expect(reader.read("0".repeat(40))).toBeUndefined()
      reader.close()
      for (const from of [Option.none(), Option.some(one), Option.some(two)]) {
        for (const to of [one, two]) {
          for (const prefix of [Option.none(), Option.some("d"), Option.some("d/sub"), Option.some("a"), Option.some("b"), Option.some("nope"), Option.some("bulk/f7.md")]) {
            const cache = {}
            const fast = await Effect.runPromise(Iso.diff({ fs, gitdir, cache, objects: openObjectReader(gitdir) }, from, to, prefix))
            // the fast diff reads nothing through isomorphic-git (whose pack cache would show it)
            expect(Object.getOwnPropertySymbols(cache)).toEqual([])
            const walked = await Effect.runPromise(Iso.diff({ fs, gitdir, cache: {} }, from, to, prefix))
            expect(sorted(fast)).toEqual(sorted(walked))
          }
        }
      }
    }
    await check()
    // packed, with deep delta chains
    await git("repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
    expect((await readdir(join(gitdir, "objects", "pack"))).some((f) => f.endsWith(".pack"))).toBe(true)
    await check()
  })

  describe("against a git server", () => {
    let server: GitServer
    let root: string
    useGitServer("lab-git-disk-store-", (started, scratch) => {
      server = started
      root = scratch
    })

    it("a change to a blob over 1 MiB arrives as a thin delta on the old one: measured without being read, exact when read", async () => {
      const url = await server.createRepo("large-blobs")
      const wc = await workingCopy(url)
      const table = Array.from({ length: 120_000 }, (_, i) => `${i},${(i * 7919) % 100_003}`).join("\n")
      fs.mkdirSync(join(wc.dir, "data"), { recursive: true })
      fs.writeFileSync(join(wc.dir, "data", "table.csv"), table)
      fs.writeFileSync(join(wc.dir, "notes.md"), "notes\n")
      await wc.commitAndPush("a large table")
      const runtime = ManagedRuntime.make(GitDisk.layer({ root, timeoutMillis: 10_000, allowedHosts: LOOPBACK }))
      const layer = await runtime.runPromise(Git)
      const remote = { url, branch: "main", token: Option.none() }
      await Effect.runPromise(layer.fetch("large", remote))
      const packs = join(root, "large.git", "objects", "pack")
      const before = new Set(await readdir(packs))

      fs.writeFileSync(join(wc.dir, "data", "table.csv"), `${table}\n120000,1\n`)
      fs.writeFileSync(join(wc.dir, "data", "head.csv"), table.slice(0, 300_000))
      const second = await wc.commitAndPush("the table grows by a line")
      expect(Option.getOrThrow(await Effect.runPromise(layer.fetch("large", remote))).commit).toBe(second)
      const added = (await readdir(packs)).filter((f) => !before.has(f) && f.endsWith(".pack"))
      expect(added).toHaveLength(1)
      // a thin pack: the new table is a delta on the old one the store holds, not 1.5 MB again
      expect((await stat(join(packs, added[0] ?? ""))).size).toBeLessThan(200_000)

      const tableId = await wc.git("rev-parse", "HEAD:data/table.csv")
      const size = Number(await wc.git("cat-file", "-s", tableId))
      expect(size).toBeGreaterThan(1024 * 1024)
      const measured = await Effect.runPromise(layer.readBlob("large", tableId, 1024 * 1024))
      expect(measured).toEqual({ size, content: Option.none() })
      const whole = await Effect.runPromise(layer.readBlob("large", tableId, 8 * 1024 * 1024))
      expect(Buffer.from(Option.getOrThrow(whole.content)).toString("utf8")).toBe(`${table}\n120000,1\n`)
      const headId = await wc.git("rev-parse", "HEAD:data/head.csv")
      const head = await Effect.runPromise(layer.readBlob("large", headId, 1024 * 1024))
      expect(Buffer.from(Option.getOrThrow(head.content)).toString("utf8")).toBe(table.slice(0, 300_000))
      await wc.remove()
      await runtime.dispose()
    })

    it("fetches only what changed since the last fetch, and reads the tree across the packs", async () => {
      const url = await server.createRepo("incremental")
      const wc = await workingCopy(url)
      for (let i = 0; i < 300; i++) {
        fs.mkdirSync(join(wc.dir, `dir${i % 10}`), { recursive: true })
        fs.writeFileSync(join(wc.dir, `dir${i % 10}`, `f${i}.txt`), `file ${i}\n${"some text that repeats\n".repeat(20)}`)
      }
      await wc.commitAndPush("many files")
      const runtime = ManagedRuntime.make(GitDisk.layer({ root, timeoutMillis: 10_000, allowedHosts: LOOPBACK }))
      const layer = await runtime.runPromise(Git)
      const remote = { url, branch: "main", token: Option.none() }
      const first = Option.getOrThrow(await Effect.runPromise(layer.fetch("lab", remote)))
      const packs = join(root, "lab.git", "objects", "pack")
      const sizes = async () => new Map(await Promise.all((await readdir(packs)).map(async (f) => [f, (await stat(join(packs, f))).size] as const)))
      const before = await sizes()

      fs.writeFileSync(join(wc.dir, "dir3", "f3.txt"), "changed\n")
      const second = await wc.commitAndPush("one change")
      const head = Option.getOrThrow(await Effect.runPromise(layer.fetch("lab", remote)))
      expect(head.commit).toBe(second)
      const added = [...(await sizes())].filter(([f]) => !before.has(f) && f.endsWith(".pack"))
      expect(added).toHaveLength(1)
      // a commit, three trees and a blob: well under the 300 files fetched first
      expect(added[0]?.[1]).toBeLessThan(2_000)

      // nothing new: the ref advertisement (one request) says so, no pack is asked for
      const served = server.requests().length
      expect(Option.getOrThrow(await Effect.runPromise(layer.fetch("lab", remote)))).toEqual(head)
      expect(server.requests().slice(served)).toEqual(["git-upload-pack"])
      expect([...(await sizes())].filter(([f]) => !before.has(f) && f.endsWith(".pack"))).toHaveLength(1)

      const changes = await Effect.runPromise(layer.diff("lab", Option.some(first.commit), head.commit, Option.none()))
      expect(changes.map((c) => c.path)).toEqual(["dir3/f3.txt"])
      const all = await Effect.runPromise(layer.diff("lab", Option.none(), head.commit, Option.none()))
      expect(all).toHaveLength(300)
      for (const change of all) {
        const oid = Option.getOrThrow(change.after).oid
        const blob = await Effect.runPromise(layer.readBlob("lab", oid, 1_048_576))
        expect(Buffer.from(Option.getOrThrow(blob.content)).toString("utf8")).toBe(await wc.git("cat-file", "blob", oid).then((s) => `${s}\n`))
      }
      await wc.remove()
      await runtime.dispose()
    })
  })
})
