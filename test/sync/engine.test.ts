import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import * as GitMemory from "../../layers/git/GitMemory.js"
import { ActivityRepo } from "../../src/activity/ActivityRepo.js"
import { SecretBox } from "../../src/common/SecretBox.js"
import { FilesRepo } from "../../src/files/FilesRepo.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { systemLab } from "../../src/labs/LabId.js"
import { repoKeyOf } from "../../src/sync/RepoLink.js"
import { SyncEngine } from "../../src/sync/SyncEngine.js"
import { SyncRepo } from "../../src/sync/SyncRepo.js"

/** The sync engine on the in-memory git layer and an in-memory PGlite. */
const TestLayer = Layer.mergeAll(SyncEngine.Default, SyncRepo.Default, FilesRepo.Default, LabsRepo.Default, ActivityRepo.Default).pipe(
  Layer.provideMerge(GitMemory.layer),
  Layer.provideMerge(SecretBox.layer(Redacted.make(randomBytes(32).toString("hex")))),
  Layer.provideMerge(Database.layer({ kind: "pglite", dataDir: undefined }))
)

/** A lab linked to a fresh in-memory remote. */
const linkedLab = (autoPush = false) =>
  Effect.gen(function* () {
    const labs = yield* LabsRepo
    const sync = yield* SyncRepo
    const slug = `lab-${randomBytes(4).toString("hex")}`
    const lab = yield* Effect.orDie(labs.insert({ slug, name: slug, plan: "free" }))
    const url = `https://git.example.com/team/${slug}.git`
    yield* sync.saveLink({
      labId: lab.id,
      repo: url,
      repoKey: repoKeyOf(url),
      defaultBranch: "main",
      autoPush,
      token: Option.none()
    })
    return { labId: systemLab(lab.id), url, remotes: yield* GitMemory.InMemoryRemotes, engine: yield* SyncEngine, sync }
  })

/** A linked lab whose remote holds `tree`, pulled once (`full`: a full reconcile). */
const syncedLab = (autoPush: boolean, tree: Record<string, string>, full = false) =>
  Effect.gen(function* () {
    const linked = yield* linkedLab(autoPush)
    yield* linked.remotes.pushFromOutside(linked.url, "main", tree)
    yield* linked.engine.pull(linked.labId, Option.none(), full)
    return linked
  })

const content = (labId: string, path: string) =>
  Effect.map(Effect.flatMap(FilesRepo, (f) => f.find(labId, path)), Option.map((f) => f.content))

layer(TestLayer, { timeout: 60_000 })("sync engine on in-memory git", (it) => {
  it.effect("first pull takes the text files the rules allow and counts what it skipped", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine } = yield* linkedLab()
      yield* remotes.pushFromOutside(url, "main", {
        "README.md": "# hi\n",
        "src/a.ts": "export const a = 1\n",
        "node_modules/x/index.js": "x",
        "pkg/dist/out.js": "x",
        "yarn.lock": "x",
        "app.min.js": "x",
        "logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
        "big.txt": "a".repeat(1_048_577),
        "edge.txt": "b".repeat(1_048_576)
      })
      const result = yield* engine.pull(labId, Option.none(), true)
      expect(result).toMatchObject({ ok: true, pulled: 3, updated: 0, removed: 0, skipped: 6 })
      expect(yield* content(labId, "/README.md")).toEqual(Option.some("# hi\n"))
      expect(Option.isSome(yield* content(labId, "/edge.txt"))).toBe(true)
      expect(Option.isNone(yield* content(labId, "/big.txt"))).toBe(true)
      expect(Option.isNone(yield* content(labId, "/logo.png"))).toBe(true)
    }))

  it.effect("an incremental pull applies only what changed, removes files deleted in git, keeps API files", () =>
    Effect.gen(function* () {
      const files = yield* FilesRepo
      const { labId, url, remotes, engine } = yield* syncedLab(false, { "a.md": "a", "b.md": "b", "c.md": "c" }, true)
      const now = new Date()
      yield* files.upsert({ labId, path: "/local.md", content: "mine", size: 4, sha: "x".repeat(40), source: "api", fromGit: false, createdAt: now, updatedAt: now })
      const head = yield* remotes.pushFromOutside(url, "main", { "a.md": "A!", "c.md": null, "d.md": "d" })
      const result = yield* engine.pull(labId, Option.none(), true)
      expect(result).toEqual({ ok: true, pulled: 1, updated: 1, skipped: 0, removed: 1, sha: head.commit })
      expect(yield* content(labId, "/a.md")).toEqual(Option.some("A!"))
      expect(Option.isNone(yield* content(labId, "/c.md"))).toBe(true)
      expect(yield* content(labId, "/local.md")).toEqual(Option.some("mine"))
      // the same head again is a no-op
      expect(yield* engine.pull(labId, Option.none(), false)).toMatchObject({ pulled: 0, updated: 0, removed: 0 })
    }))

  it.effect("records one activity entry per sync with counts and the short commit", () =>
    Effect.gen(function* () {
      const activity = yield* ActivityRepo
      const { labId, url, remotes, engine } = yield* linkedLab()
      const head = yield* remotes.pushFromOutside(url, "main", { "x.md": "x", "y.md": "y" })
      yield* engine.pull(labId, Option.none(), true)
      const page = yield* activity.list(systemLab(labId), { limit: 10, cursor: Option.none() })
      expect(page.items).toHaveLength(1)
      expect(page.items[0]?.message).toBe(`Synced team/${url.split("/").at(-1)?.replace(".git", "")}: 2 added, 0 updated, 0 removed (${head.commit.slice(0, 7)})`)
    }))

  it.effect("pushes each outbox entry as its own commit and forgets the entries", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine, sync } = yield* syncedLab(true, { "keep.md": "k" })
      yield* sync.enqueue(labId, "/notes/new.md", "new", { actor: "key_test", name: "test key" })
      yield* sync.enqueue(labId, "/keep.md", null, { actor: "key_test", name: "test key" })
      expect(yield* engine.push(labId)).toBe(2)
      expect(yield* sync.pendingCount(labId)).toBe(0)
      const tree = yield* remotes.read(url, "main")
      expect([...tree.entries()]).toEqual([["notes/new.md", "new"]])
    }))

  it.effect("after an outside push, commits land on top of it and the outside change is pulled", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine, sync } = yield* syncedLab(true, { "a.md": "a" })
      yield* remotes.pushFromOutside(url, "main", { "outside.md": "o" })
      yield* sync.enqueue(labId, "/mine.md", "m", { actor: "key_test", name: "test key" })
      yield* engine.push(labId)
      const tree = yield* remotes.read(url, "main")
      expect(tree.get("outside.md")).toBe("o")
      expect(tree.get("mine.md")).toBe("m")
      expect(yield* content(labId, "/outside.md")).toEqual(Option.some("o"))
    }))

  it.effect("a pending local write wins over a remote change to the same path", () =>
    Effect.gen(function* () {
      const files = yield* FilesRepo
      const { labId, url, remotes, engine, sync } = yield* syncedLab(true, { "a.md": "v1" })
      const now = new Date()
      yield* files.upsert({ labId, path: "/a.md", content: "local", size: 5, sha: "y".repeat(40), source: "api", fromGit: true, createdAt: now, updatedAt: now })
      yield* sync.enqueue(labId, "/a.md", "local", { actor: "key_test", name: "test key" })
      yield* remotes.pushFromOutside(url, "main", { "a.md": "remote" })
      yield* engine.pull(labId, Option.none(), false)
      expect(yield* content(labId, "/a.md")).toEqual(Option.some("local"))
      yield* engine.push(labId)
      expect((yield* remotes.read(url, "main")).get("a.md")).toBe("local")
    }))

  it.effect("when the host is down the push fails, the entries stay, and a later push delivers them", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine, sync } = yield* syncedLab(true, { "a.md": "a" })
      yield* sync.enqueue(labId, "/b.md", "b", { actor: "key_test", name: "test key" })
      yield* remotes.failNext(1)
      const failed = yield* Effect.flip(engine.push(labId))
      expect(failed.message).toMatch(/503/)
      expect(yield* sync.pendingCount(labId)).toBe(1)
      yield* engine.push(labId)
      expect(yield* sync.pendingCount(labId)).toBe(0)
      expect((yield* remotes.read(url, "main")).get("b.md")).toBe("b")
    }))

  it.effect("an entry git refuses (queued by an older version) is set aside with its reason; the writes around it land", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine, sync } = yield* syncedLab(true, { "a.md": "a" })
      yield* sync.enqueue(labId, "/before.md", "1", { actor: "key_test", name: "test key" })
      yield* sync.enqueue(labId, "/.git./config", "[core]", { actor: "key_test", name: "test key" })
      yield* sync.enqueue(labId, "/git~1/config", null, { actor: "key_test", name: "test key" })
      yield* sync.enqueue(labId, "/after.md", "2", { actor: "key_test", name: "test key" })
      expect(yield* engine.push(labId)).toBe(2)
      expect(yield* sync.pendingCount(labId)).toBe(0)
      const tree = yield* remotes.read(url, "main")
      expect([...tree.keys()].sort()).toEqual(["a.md", "after.md", "before.md"])
      const setAside = yield* sync.setAsideOf(labId)
      expect(setAside.count).toBe(2)
      expect(setAside.newest.map((w) => [w.path, w.deleted]).sort()).toEqual([["/.git./config", false], ["/git~1/config", true]])
      for (const w of setAside.newest) expect(w.reason).toMatch(/git refuses/)
      // set aside for good: the next write goes out alone
      yield* sync.enqueue(labId, "/later.md", "3", { actor: "key_test", name: "test key" })
      expect(yield* engine.push(labId)).toBe(1)
      expect((yield* sync.setAsideOf(labId)).count).toBe(2)
    }))

  it.effect("a subtree pull reconciles only that directory", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine } = yield* syncedLab(false, { "docs/a.md": "a", "src/b.ts": "b" })
      yield* remotes.pushFromOutside(url, "main", { "docs/a.md": "A", "docs/new.md": "n", "src/b.ts": "B" })
      const result = yield* engine.pull(labId, Option.some("/docs/"), true)
      expect(result).toMatchObject({ pulled: 1, updated: 1, removed: 0 })
      expect(yield* content(labId, "/docs/a.md")).toEqual(Option.some("A"))
      expect(yield* content(labId, "/src/b.ts")).toEqual(Option.some("b"))
      // the full pull still applies the rest
      expect(yield* engine.pull(labId, Option.none(), true)).toMatchObject({ updated: 1 })
      expect(yield* content(labId, "/src/b.ts")).toEqual(Option.some("B"))
    }))
})

