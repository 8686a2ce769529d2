/**
 * The service's native commits, judged by git itself: random runs of writes and deletes (nested directories,
 * directories emptied, an executable kept executable) built by CommitBuilder.ts on a repository git made, packed by
 * PackWriter.ts, indexed by `git index-pack --strict` and checked by `git fsck --strict`; each commit's tree must be
 * what the writes so far make it. The deltas the builder writes are applied back by the reader's own code.
 */
import { Effect, FastCheck, Option } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type Change, buildCommits, MAX_DELTA_DEPTH } from "../../layers/git/CommitBuilder.js"
import { prefixSuffixDelta } from "../../layers/git/DeltaEncode.js"
import { applyDelta, readEntryHeader, TYPES } from "../../layers/git/PackFormat.js"
import { writePack } from "../../layers/git/PackWriter.js"
import * as GitDisk from "../../layers/git/GitDisk.js"
import { idxCount, idxEntries } from "../../layers/git/PackIdx.js"
import { openObjectReader } from "../../layers/git/PackReader.js"
import { Git } from "../../src/sync/Git.js"

const dirs: Array<string> = []
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const git = (gitDir: string, args: ReadonlyArray<string>, input?: Buffer) =>
  execFileSync("git", [`--git-dir=${gitDir}`, ...args], { input, maxBuffer: 64 * 1024 * 1024 })

/** A bare repository with one commit git made: a few files, an executable, a nested directory. */
const seeded = () => {
  const root = mkdtempSync(join(tmpdir(), "lab-builder-"))
  dirs.push(root)
  const work = join(root, "work")
  execFileSync("git", ["init", "--quiet", "--initial-branch=main", work])
  const files: Record<string, string> = { "README.md": "hello\n", "a/b/c.md": "deep\n", "a/x.md": "x\n", "run.sh": "#!/bin/sh\n" }
  for (const [path, content] of Object.entries(files)) {
    execFileSync("mkdir", ["-p", join(work, path, "..")])
    writeFileSync(join(work, path), content)
  }
  execFileSync("chmod", ["+x", join(work, "run.sh")])
  const env = { ...process.env, GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@e" }
  execFileSync("git", ["add", "-A"], { cwd: work })
  execFileSync("git", ["commit", "--quiet", "-m", "seed"], { cwd: work, env })
  const gitDir = join(work, ".git")
  const commit = git(gitDir, ["rev-parse", "HEAD"]).toString().trim()
  const tree = git(gitDir, ["rev-parse", "HEAD^{tree}"]).toString().trim()
  return { gitDir, head: { commit, tree }, files: new Map(Object.entries(files)) }
}

/** Every file of a commit as git lists it: path → mode and content. */
const treeOf = (gitDir: string, commit: string) => {
  const listing = git(gitDir, ["ls-tree", "-r", "-z", commit]).toString().split("\0").filter((l) => l !== "")
  return new Map(
    listing.map((line) => {
      const [meta = "", path = ""] = line.split("\t")
      const [mode = "", , oid = ""] = meta.split(" ")
      return [path, `${mode} ${git(gitDir, ["cat-file", "blob", oid]).toString()}`] as const
    })
  )
}

const PATHS = ["README.md", "a/x.md", "a/b/c.md", "a/b/d.md", "a/new/deep/e.md", "z.md", "run.sh", "m/n.md"]
const changeArb = FastCheck.record({
  path: FastCheck.constantFrom(...PATHS),
  content: FastCheck.option(FastCheck.string({ maxLength: 40 }), { freq: 3 })
})

describe("native commits", () => {
  it("are each the tree the writes so far make, and pass git index-pack --strict and git fsck --strict", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(changeArb, { minLength: 1, maxLength: 25 }), (steps) => {
        const { gitDir, head, files } = seeded()
        const changes: Array<Change> = steps.map((s, i) => ({
          path: s.path,
          content: s.content === null ? null : Buffer.from(s.content),
          message: `${s.content === null ? "Delete" : "Update"} ${s.path}\n`,
          authorName: "Lab Service",
          authorEmail: "lab-service@users.noreply.local",
          time: 1_700_000_000 + i
        }))
        const built = buildCommits((oid) => ({ content: git(gitDir, ["cat-file", "tree", oid]), depth: 0 }), head, changes)
        const pack = writePack(built.objects)
        git(gitDir, ["index-pack", "--strict", "--fix-thin", "--stdin"], pack.pack)

        const model = new Map([...files].map(([path, content]) => [path, `${path === "run.sh" ? "100755" : "100644"} ${content}`]))
        let parent = head.commit
        steps.forEach((step, i) => {
          // a file keeps its mode; a new one (a deleted one written again too) is not executable
          const mode = model.get(step.path)?.startsWith("100755") ? "100755" : "100644"
          if (step.content === null) model.delete(step.path)
          else model.set(step.path, `${mode} ${step.content}`)
          const at = built.heads[i]
          expect(at).toBeDefined()
          if (at === undefined) return
          expect(treeOf(gitDir, at.commit)).toEqual(model)
          if (at.commit !== parent) expect(git(gitDir, ["rev-parse", `${at.commit}^`]).toString().trim()).toBe(parent)
          parent = at.commit
        })
        git(gitDir, ["update-ref", "refs/heads/main", parent])
        git(gitDir, ["fsck", "--strict", "--no-progress", "--no-dangling"])
      }),
      { numRuns: 25 }
    )
  }, 120_000)

  it("keep a busy directory's delta chains within git's depth, counting the depth of the version they start from", () => {
    const { gitDir, head } = seeded()
    const changes = (from: number, count = 120): Array<Change> =>
      Array.from({ length: count }, (_, i) => ({
        path: `a/w${from + i}.md`,
        content: Buffer.from(`${from + i}\n`),
        message: `Update a/w${from + i}.md\n`,
        authorName: "Lab Service",
        authorEmail: "lab-service@users.noreply.local",
        time: 1_700_000_000 + i
      }))
    const maxChain = (built: ReturnType<typeof buildCommits>) => {
      const pack = writePack(built.objects)
      const name = git(gitDir, ["index-pack", "--strict", "--fix-thin", "--stdin"], pack.pack).toString().trim().split(/\s+/).at(-1)
      const verified = git(gitDir, ["verify-pack", "-v", join(gitDir, "objects", "pack", `pack-${name}.idx`)]).toString()
      return Math.max(0, ...[...verified.matchAll(/^chain length = (\d+):/gm)].map((m) => Number(m[1])))
    }
    const readTree = (depth: number) => (oid: string) => ({ content: git(gitDir, ["cat-file", "tree", oid]), depth })
    // a/ made big enough that each version is worth a delta on the one before
    const warm = buildCommits(readTree(0), head, changes(1_000, 60))
    maxChain(warm)
    const first = buildCommits(readTree(0), warm.heads.at(-1), changes(0))
    const firstChain = maxChain(first)
    expect(firstChain).toBeGreaterThan(1)
    expect(firstChain).toBeLessThanOrEqual(MAX_DELTA_DEPTH)
    // the next build starts from a version already MAX_DELTA_DEPTH - 1 deltas deep: one more delta, then whole again
    const tip = first.heads.at(-1)
    const second = buildCommits(readTree(MAX_DELTA_DEPTH - 1), tip, changes(120))
    // versions of a/ stored whole (a/ is the tree holding x.md): every MAX_DELTA_DEPTH + 1-th of 120 versions
    const wholeVersionsOfA = (built: ReturnType<typeof buildCommits>) =>
      built.objects.filter((o) => o.kind === "whole" && o.type === "tree" && o.content.includes("x.md")).length
    expect(wholeVersionsOfA(first)).toBe(2)
    expect(wholeVersionsOfA(second)).toBe(3)
  })

  it("write deltas that git's delta format rebuilds into the target", () => {
    const bytes = FastCheck.uint8Array({ maxLength: 3_000 }).map((a) => Buffer.from(a))
    FastCheck.assert(
      FastCheck.property(bytes, bytes, bytes, bytes, (prefix, suffix, before, after) => {
        const base = Buffer.concat([prefix, before, suffix])
        const target = Buffer.concat([prefix, after, suffix])
        const delta = prefixSuffixDelta(base, target)
        if (delta !== undefined) expect(applyDelta(delta, base).equals(target)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })

  it("delete every file: the commit's tree is git's own empty tree, and git takes the commit", () => {
    const { gitDir, head, files } = seeded()
    const changes = [...files.keys()].map((path, i): Change => ({
      path,
      content: null,
      message: `Delete ${path}\n`,
      authorName: "Lab Service",
      authorEmail: "lab-service@users.noreply.local",
      time: 1_700_000_000 + i
    }))
    const built = buildCommits((oid) => ({ content: git(gitDir, ["cat-file", "tree", oid]), depth: 0 }), head, changes)
    git(gitDir, ["index-pack", "--strict", "--fix-thin", "--stdin"], writePack(built.objects).pack)
    const tip = built.heads.at(-1)?.commit ?? ""
    git(gitDir, ["update-ref", "refs/heads/main", tip])
    git(gitDir, ["fsck", "--strict", "--no-progress"])
    expect(git(gitDir, ["rev-parse", `${tip}^{tree}`]).toString().trim()).toBe(git(gitDir, ["hash-object", "-t", "tree", "/dev/null"]).toString().trim())
  })

  it("a directory back to an earlier version is stored again whole, never as a delta on its own successor (a cycle)", async () => {
    const root = mkdtempSync(join(tmpdir(), "lab-builder-revert-"))
    dirs.push(root)
    const packDir = join(root, "lab.git", "objects", "pack")
    const info = { message: "m\n", authorName: "Lab Service", authorEmail: "lab-service@users.noreply.local" }
    const edit = (path: string, content: string | null) => ({ path, content, info })
    /** The store's packs: name → the ids it holds. */
    const packs = () =>
      new Map(
        readdirSync(packDir)
          .filter((name) => name.endsWith(".idx"))
          .map((name) => {
            const idx = readFileSync(join(packDir, name))
            return [name.slice(0, -4), idxEntries(idx, idxCount(idx) ?? 0)] as const
          })
      )
    const storedAgain: Array<string> = []
    const tip = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* Git
        // a/ big enough that its next version is worth a delta
        const first = Array.from({ length: 30 }, (_, i) => edit(`a/keep-${i}-${"x".repeat(30)}.md`, `keep ${i}\n`))
        let head = Option.flatten(Option.fromNullable((yield* store.commitAll("lab", Option.none(), first)).at(-1)))
        // then each its own build, as each push is: a/ gets a file, loses it, gets it back, loses it again
        for (const change of [edit("a/new.md", "new\n"), edit("a/new.md", null), edit("a/new.md", "new\n"), edit("a/new.md", null)]) {
          const before = packs()
          const held = new Set([...before.values()].flatMap((entries) => entries.map((e) => e.id)))
          head = Option.flatten(Option.fromNullable((yield* store.commitAll("lab", head, [change])).at(-1)))
          for (const [name, entries] of packs()) {
            if (before.has(name)) continue
            const pack = readFileSync(join(packDir, `${name}.pack`))
            for (const e of entries) if (held.has(e.id) && TYPES[readEntryHeader(pack, e.offset).kind] === undefined) storedAgain.push(e.id)
          }
        }
        return head
      }).pipe(Effect.provide(GitDisk.layer({ root, timeoutMillis: 1_000 })))
    )
    expect(storedAgain).toEqual([])
    const reader = openObjectReader(join(root, "lab.git"))
    expect(reader.read(Option.getOrThrow(tip).tree)?.content.includes("a")).toBe(true)
    reader.close()
  })
})
