/**
 * The path rule the files API and the sync share, against git's own cases
 * (t/t1014-read-tree-confusing.sh, t/t0060-path-utils.sh) and checked against
 * the real thing: git's verify_path (update-index with core.protectNTFS and
 * core.protectHFS on) and isomorphic-git's tree reader, which pushes for us.
 */
import { Either } from "effect"
import git, { Errors } from "isomorphic-git"
import { createFsFromVolume, Volume } from "memfs"
import { execFile, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import { gitRefusesName, normalizePath, normalizePathShape } from "../../src/files/Paths.js"

const run = promisify(execFile)
const ZWNJ = "\u200c"

/** Names git or isomorphic-git refuse as a tree entry, and why (for the test's title). */
const refusedNames: ReadonlyArray<readonly [name: string, why: string]> = [
  // t1014-read-tree-confusing.sh, each of which git refuses at the end of a path and as a subtree
  [".", "dot"],
  ["..", "dot-dot"],
  [".git", ".git"],
  [".GIT", ".git in upper case"],
  [`${ZWNJ}.Git`, "HFS+: an ignorable code point before it"],
  [`.gI${ZWNJ}T`, "HFS+: an ignorable code point inside it"],
  [`.GiT${ZWNJ}`, "HFS+: an ignorable code point after it"],
  ["git~1", "NTFS: the 8.3 short name"],
  [".git. ", "NTFS: trailing dot and space"],
  [".git...:alternate-stream", "NTFS: trailing dots and an alternate data stream"],
  // the reports
  [".git.", "NTFS: a trailing dot"],
  [".git ", "NTFS: a trailing space"],
  [`.g${ZWNJ}it`, "HFS+: a zero-width non-joiner"],
  // the rest of git's NTFS and HFS+ rules (path.c is_ntfs_dotgit, utf8.c next_hfs_char)
  ["GIT~1", "NTFS: the short name in upper case"],
  ["git~1 .", "NTFS: the short name with trailing space and dot"],
  ["git~1:stream", "NTFS: the short name with a stream"],
  [".git::$INDEX_ALLOCATION", "NTFS: the directory's index stream"],
  [".git\u200d", "HFS+: zero width joiner"],
  [".\u200egit", "HFS+: left-to-right mark"],
  [".gi\u202et", "HFS+: right-to-left override"],
  [".git\u206f", "HFS+: nominal digit shapes"],
  ["\ufeff.git", "HFS+: zero width no-break space"],
  // isomorphic-git's UnsafeFilepathError checks go further
  ["git~2", "isomorphic-git: short names up to ~9"],
  ["git~9", "isomorphic-git: short names up to ~9"],
  [".git~1", "isomorphic-git: the short name with a dot"],
  [`.${ZWNJ}`, "isomorphic-git: a dot once ignorable code points are dropped"],
  [`.${ZWNJ}.`, "isomorphic-git: dot-dot once ignorable code points are dropped"],
  [`.git${ZWNJ}.`, "isomorphic-git: ignorable code points dropped, then trailing dots"]
]

/** Names both accept: the rule must not refuse them. */
const acceptedNames: ReadonlyArray<string> = [
  ".gitignore",
  ".gitattributes",
  ".gitmodules", // refused only as a symlink, and the service never writes symlinks
  ".github",
  ".gitkeep",
  ".git-blame-ignore-revs",
  "git",
  "git.md",
  "..git",
  "...",
  ".git x",
  ".gitx",
  "x.git",
  "my.git.",
  "git~0",
  "git~10",
  "agit~1",
  "GI7EBA~1",
  "notes:draft.md",
  `caf${ZWNJ}e.md`,
  "ノート.md"
]

describe("gitRefusesName: git's own cases", () => {
  it.each(refusedNames)("refuses %j (%s)", (name) => {
    expect(gitRefusesName(name)).toBeDefined()
  })

  it.each(acceptedNames.map((name) => [name]))("accepts %j", (name) => {
    expect(gitRefusesName(name)).toBeUndefined()
  })
})

describe("the files API's path rule", () => {
  const refusedPaths: ReadonlyArray<string> = [
    "/.git./config",
    "/.git /config",
    "/git~1/config",
    `/.g${ZWNJ}it/config`,
    "/.GIT/config",
    "/notes/.git::$INDEX_ALLOCATION/x",
    "/a/b/GIT~1",
    `/docs/.git${ZWNJ}`
  ]

  it.each(refusedPaths.map((path) => [path]))("refuses %j, naming git's rule", (path) => {
    expect(Either.getLeft(normalizePath(path))).toEqual(
      expect.objectContaining({ value: expect.stringMatching(/git refuses|inside \.git/) })
    )
  })

  it("refuses a path that only becomes .git after normalising", () => {
    expect(Either.isLeft(normalizePath("/a/../.git./x"))).toBe(true)
  })

  it("still names such paths for reading and deleting what is already stored, except .git itself (always refused)", () => {
    expect(normalizePathShape("/.git./config")).toEqual(Either.right("/.git./config"))
    expect(Either.isLeft(normalizePathShape("/.Git/config"))).toBe(true)
    expect(Either.isLeft(normalizePathShape("/a\\b"))).toBe(true)
  })

  it("leaves ordinary dot-files and names with git in them alone", () => {
    for (const name of acceptedNames) expect(normalizePath(`/dir/${name}/f.md`)).toEqual(Either.right(`/dir/${name}/f.md`))
  })
})

/** The cases above as files and as directories. */
const candidatePaths = [...refusedNames.map(([name]) => name), ...acceptedNames].flatMap((name) => [name, `dir/${name}/file`])

/** The paths `git update-index` takes into the index with both protections on (it ignores those verify_path refuses). */
const gitAccepts = async (paths: ReadonlyArray<string>): Promise<ReadonlySet<string>> => {
  const repo = await mkdtemp(join(tmpdir(), "lab-verify-path-"))
  try {
    await run("git", ["init", "--quiet", repo])
    const oid = (await run("git", ["hash-object", "-w", "/dev/null"], { cwd: repo })).stdout.trim()
    await new Promise<void>((resolve, reject) => {
      const args = ["-c", "core.protectNTFS=true", "-c", "core.protectHFS=true", "update-index", "--add", "-z", "--index-info"]
      const child = spawn("git", args, { cwd: repo })
      child.on("error", reject)
      child.on("close", () => resolve())
      child.stdin.end(paths.map((p) => `100644 ${oid}\t${p}\0`).join(""))
    })
    return new Set((await run("git", ["ls-files", "-z"], { cwd: repo })).stdout.split("\0").filter((p) => p !== ""))
  } finally {
    await rm(repo, { recursive: true, force: true })
  }
}

/** The names isomorphic-git reads back from a tree (it refuses unsafe names when it parses one). */
const isomorphicGitAccepts = async (names: ReadonlyArray<string>): Promise<ReadonlySet<string>> => {
  const fs = createFsFromVolume(new Volume())
  const gitdir = "/repo.git"
  await git.init({ fs, gitdir, bare: true })
  const oid = await git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode("x") })
  const accepted = new Set<string>()
  for (const name of names) {
    const tree = await git.writeTree({ fs, gitdir, tree: [{ mode: "100644", path: name, oid, type: "blob" }] })
    const read = await git.readTree({ fs, gitdir, oid: tree, cache: {} }).then(
      () => true,
      (e: unknown) => (e instanceof Errors.UnsafeFilepathError ? false : Promise.reject(e))
    )
    if (read) accepted.add(name)
  }
  return accepted
}

describe("the rule is exactly git's verify_path and isomorphic-git's checks together", () => {
  let byGit: ReadonlySet<string>
  let byIsomorphicGit: ReadonlySet<string>
  beforeAll(async () => {
    byGit = await gitAccepts(candidatePaths)
    byIsomorphicGit = await isomorphicGitAccepts([...refusedNames.map(([name]) => name), ...acceptedNames])
  })

  it("refuses every path git refuses", () => {
    for (const path of candidatePaths) {
      const ours = path.split("/").map(gitRefusesName).find((r) => r !== undefined)
      if (!byGit.has(path)) expect(ours, `git refuses ${JSON.stringify(path)}`).toBeDefined()
    }
  })

  it("refuses every name isomorphic-git refuses", () => {
    for (const [name] of refusedNames) {
      if (!byIsomorphicGit.has(name)) expect(gitRefusesName(name), JSON.stringify(name)).toBeDefined()
    }
  })

  it("refuses nothing both accept", () => {
    for (const [name, why] of refusedNames) {
      const both = byGit.has(name) && byGit.has(`dir/${name}/file`) && byIsomorphicGit.has(name)
      expect(both, `${JSON.stringify(name)} (${why}) is refused by neither`).toBe(false)
    }
    for (const name of acceptedNames) {
      expect(byGit.has(name) && byGit.has(`dir/${name}/file`), `git accepts ${JSON.stringify(name)}`).toBe(true)
      expect(byIsomorphicGit.has(name), `isomorphic-git accepts ${JSON.stringify(name)}`).toBe(true)
    }
  })
})
