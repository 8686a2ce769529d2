import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Option } from "effect"
import type { StoredState } from "../../src/files/FilesRepo.js"
import type { GitChange, GitEntry } from "../../src/sync/Git.js"
import { isLabPath, lookupPaths, type PullPlan, planPull, removalsOf } from "../../src/sync/PullPlan.js"
import { isRegularFile, isSkippedPath } from "../../src/sync/Rules.js"

/** The pull plan on its own: no git, no database. */

const OIDS = ["1".repeat(40), "2".repeat(40), "3".repeat(40)]
const MODES: ReadonlyArray<Pick<GitEntry, "mode" | "type">> = [
  { mode: "100644", type: "blob" },
  { mode: "100755", type: "blob" },
  { mode: "120000", type: "blob" },
  { mode: "160000", type: "commit" }
]
const SEGMENTS = ["a", "b", "docs", "node_modules", "app.min.js", "fig.png", "..", "README.md", " x"]

const repoPath = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 }).map((s) => s.join("/"))
const entry = fc.record({ path: repoPath, oid: fc.constantFrom(...OIDS), kind: fc.constantFrom(...MODES) })
/** A tree: entries by repository path (no path both a file and a directory matters to the plan). */
const tree = fc.uniqueArray(entry, { selector: (e) => e.path, maxLength: 12 }).map((entries) =>
  entries.map((e): GitEntry => ({ path: e.path, oid: e.oid, ...e.kind }))
)
const storedFiles = fc
  .uniqueArray(fc.record({ path: repoPath, sha: fc.constantFrom(...OIDS), fromGit: fc.boolean() }), { selector: (f) => f.path, maxLength: 12 })
  .map((files) => new Map(files.map((f): [string, StoredState] => [`/${f.path}`, { sha: f.sha, fromGit: f.fromGit }])))

/** Every entry of `entries` as added (a full reconcile's diff from nothing). */
const allAdded = (entries: ReadonlyArray<GitEntry>): Array<GitChange> =>
  entries.map((e) => ({ path: e.path, before: Option.none(), after: Option.some(e) }))

/** The diff between two trees. */
const diffOf = (before: ReadonlyArray<GitEntry>, after: ReadonlyArray<GitEntry>): Array<GitChange> => {
  const old = new Map(before.map((e) => [e.path, e]))
  const now = new Map(after.map((e) => [e.path, e]))
  const paths = new Set([...old.keys(), ...now.keys()])
  return [...paths].flatMap((path) => {
    const a = old.get(path)
    const b = now.get(path)
    return a?.oid === b?.oid && a?.mode === b?.mode ? [] : [{ path, before: Option.fromNullable(a), after: Option.fromNullable(b) }]
  })
}

/** The stored files after the plan ran (every blob text). */
const applied = (stored: ReadonlyMap<string, StoredState>, plan: PullPlan) => {
  const out = new Map(stored)
  for (const read of plan.toRead) out.set(read.path, { sha: read.oid, fromGit: true })
  for (const removal of removalsOf(plan.gone, stored)) out.delete(removal.path)
  return out
}

/** The files a lab takes from a tree under the rules (spec 4.4). */
const takenFrom = (entries: ReadonlyArray<GitEntry>) =>
  new Map(entries.filter((e) => isRegularFile(e) && !isSkippedPath(e.path) && isLabPath(`/${e.path}`)).map((e) => [`/${e.path}`, e.oid]))

const reconcile = { reconcile: true, figures: [] }

describe("planPull", () => {
  it("reads new and changed files, removes deleted git files, skips what the rules leave out", () => {
    const readme: GitEntry = { path: "README.md", oid: OIDS[0]!, mode: "100644", type: "blob" }
    const link: GitEntry = { path: "link", oid: OIDS[1]!, mode: "120000", type: "blob" }
    const changes: Array<GitChange> = [
      { path: "README.md", before: Option.none(), after: Option.some(readme) },
      { path: "link", before: Option.none(), after: Option.some(link) },
      { path: "gone.txt", before: Option.some({ ...readme, path: "gone.txt" }), after: Option.none() },
      { path: "fig.png", before: Option.some({ ...readme, path: "fig.png" }), after: Option.none() }
    ]
    const stored = new Map<string, StoredState>([
      ["/gone.txt", { sha: OIDS[0]!, fromGit: true }],
      ["/link", { sha: OIDS[2]!, fromGit: true }]
    ])
    const plan = planPull(changes, stored, new Set())
    expect(plan.toRead).toEqual([{ path: "/README.md", oid: OIDS[0], expected: null }])
    expect(plan.skipped).toBe(1)
    expect(plan.figuresGone).toEqual(["/fig.png"])
    expect(removalsOf(plan.gone, stored)).toEqual([
      { path: "/link", expected: OIDS[2] },
      { path: "/gone.txt", expected: OIDS[0] }
    ])
  })

  it("a reconcile forgets figures and git files the tree no longer has, keeps the lab's own files", () => {
    const stored = new Map<string, StoredState>([
      ["/old.md", { sha: OIDS[0]!, fromGit: true }],
      ["/notes.md", { sha: OIDS[1]!, fromGit: false }]
    ])
    const plan = planPull([], stored, new Set(), { reconcile: true, figures: ["/plot.png", "/gone.pdf"] })
    expect([...plan.gone]).toEqual(["/old.md"])
    expect(plan.figuresGone).toEqual(["/plot.png", "/gone.pdf"])
  })

  it("only the paths without a pending write are looked up", () => {
    const changes = allAdded([{ path: "a", oid: OIDS[0]!, mode: "100644", type: "blob" }, { path: "b", oid: OIDS[0]!, mode: "100644", type: "blob" }])
    expect(lookupPaths(changes, new Set(["/a"]))).toEqual(["/b"])
  })

  it.prop(
    "a path with a pending write is never read nor removed",
    [tree, tree, storedFiles, fc.array(repoPath, { maxLength: 6 }), fc.boolean()],
    ([before, after, stored, pendingPaths, full]) => {
      const pending = new Set(pendingPaths.map((p) => `/${p}`))
      const plan = full
        ? planPull(allAdded(after), stored, pending, reconcile)
        : planPull(diffOf(before, after), stored, pending)
      for (const read of plan.toRead) expect(pending.has(read.path)).toBe(false)
      for (const removal of removalsOf(plan.gone, stored)) expect(pending.has(removal.path)).toBe(false)
    }
  )

  it.prop(
    "with nothing pending, a reconcile leaves the lab's git files as the tree under the rules",
    [tree, storedFiles],
    ([entries, stored]) => {
      const result = applied(stored, planPull(allAdded(entries), stored, new Set(), reconcile))
      const taken = takenFrom(entries)
      for (const [path, oid] of taken) expect(result.get(path)?.sha).toBe(oid)
      for (const [path, state] of result) {
        if (state.fromGit) expect(taken.get(path)).toBe(state.sha)
        else if (!taken.has(path)) expect(stored.get(path)).toEqual(state)
      }
    }
  )

  it.prop(
    "with nothing pending, a diff from the synced tree ends where a reconcile of the new tree ends",
    [tree, tree, storedFiles],
    ([before, after, lab]) => {
      // the lab as the first tree left it (its own files beside)
      const synced = applied(lab, planPull(allAdded(before), lab, new Set(), reconcile))
      const incremental = applied(synced, planPull(diffOf(before, after), synced, new Set()))
      const full = applied(synced, planPull(allAdded(after), synced, new Set(), reconcile))
      expect(incremental).toEqual(full)
    }
  )
})
