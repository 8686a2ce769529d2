import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import * as GitMemory from "../../layers/git/GitMemory.js"
import { ActivityRepo } from "../../src/activity/ActivityRepo.js"
import { SecretBox } from "../../src/common/SecretBox.js"
import { FigureId } from "../../src/figures/Figure.js"
import { FiguresRepo } from "../../src/figures/FiguresRepo.js"
import { FilesRepo } from "../../src/files/FilesRepo.js"
import { systemLab } from "../../src/labs/LabId.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { repoKeyOf } from "../../src/sync/RepoLink.js"
import { SyncEngine } from "../../src/sync/SyncEngine.js"
import { SyncRepo } from "../../src/sync/SyncRepo.js"

/** The sync engine on the in-memory git layer and an in-memory PGlite, as in engine.test.ts. */
const TestLayer = Layer.mergeAll(
  SyncEngine.Default,
  SyncRepo.Default,
  FilesRepo.Default,
  FiguresRepo.Default,
  LabsRepo.Default,
  ActivityRepo.Default
).pipe(
  Layer.provideMerge(GitMemory.layer),
  Layer.provideMerge(SecretBox.layer(Redacted.make(randomBytes(32).toString("hex")))),
  Layer.provideMerge(Database.layer({ kind: "pglite", dataDir: undefined }))
)

/** A lab linked to a fresh in-memory repository, with that remote and the sync engine the tests drive. */
const linkedLab = Effect.gen(function* () {
  const labs = yield* LabsRepo
  const sync = yield* SyncRepo
  const slug = `fig-${randomBytes(4).toString("hex")}`
  const lab = yield* Effect.orDie(labs.insert({ slug, name: slug, plan: "free" }))
  const url = `https://git.example.com/team/${slug}.git`
  yield* sync.saveLink({ labId: lab.id, repo: url, repoKey: repoKeyOf(url), defaultBranch: "main", autoPush: false, token: Option.none() })
  return { labId: systemLab(lab.id), url, remotes: yield* GitMemory.InMemoryRemotes, engine: yield* SyncEngine }
})

/** What `git hash-object` prints for these bytes. */
const blobId = (bytes: Uint8Array) => createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex")

const png = (seed: number) => Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, seed, 0x49, 0x48, 0x44, 0x52])
const PDF = Uint8Array.from([...Buffer.from("%PDF-1.7\n"), 0, 0xff, 0xfe, 0x01, 0x02])
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n'

const gitFigures = (labId: string) =>
  Effect.gen(function* () {
    const repo = yield* FiguresRepo
    const page = yield* repo.list(systemLab(labId), { limit: 100, cursor: Option.none(), source: "git" })
    return new Map(page.items.map((f) => [f.path ?? "", f]))
  })

layer(TestLayer, { timeout: 60_000 })("figures recorded by the sync engine", (it) => {
  it.effect("a pull records images and PDFs with path, size, blob id and commit; text files stay files", () =>
    Effect.gen(function* () {
      const files = yield* FilesRepo
      const { labId, url, remotes, engine } = yield* linkedLab
      const head = yield* remotes.pushFromOutside(url, "main", {
        "notes.md": "# notes\n",
        "figures/loss.png": png(1),
        "paper/Figure 2.PDF": PDF,
        "figures/arch.svg": SVG,
        "node_modules/pkg/logo.png": png(2), // a skipped directory: neither a file nor a figure
        "data/blob.bin": Uint8Array.from([0, 1, 2, 3]) // binary but not a figure
      })
      const result = yield* engine.pull(labId, Option.none(), true)
      expect(result).toMatchObject({ pulled: 2, skipped: 4 })

      const figures = yield* gitFigures(labId)
      expect([...figures.keys()].sort()).toEqual(["/figures/arch.svg", "/figures/loss.png", "/paper/Figure 2.PDF"])
      expect(figures.get("/figures/loss.png")).toMatchObject({
        source: "git",
        title: "loss.png",
        mediaType: "image/png",
        size: png(1).byteLength,
        blobId: blobId(png(1)),
        commit: head.commit,
        url: null,
        caption: null,
        experimentId: null
      })
      expect(figures.get("/paper/Figure 2.PDF")).toMatchObject({ mediaType: "application/pdf", size: PDF.byteLength, blobId: blobId(PDF) })
      // an SVG is text: synced as a file and listed as a figure
      expect(figures.get("/figures/arch.svg")).toMatchObject({ mediaType: "image/svg+xml", blobId: blobId(Buffer.from(SVG)) })
      expect(Option.map(yield* files.find(labId, "/figures/arch.svg"), (f) => f.content)).toEqual(Option.some(SVG))
      expect(Option.isNone(yield* files.find(labId, "/figures/loss.png"))).toBe(true)

      const activity = yield* ActivityRepo
      const entries = (yield* activity.list(systemLab(labId), { limit: 10, cursor: Option.none() })).items
      expect(entries.map((e) => e.kind).sort()).toEqual(["figure.synced", "sync"])
      expect(entries.find((e) => e.kind === "figure.synced")).toMatchObject({
        actor: "sync",
        ref: head.commit,
        message: `Figures from git: 3 added, 0 updated, 0 removed (${head.commit.slice(0, 7)})`
      })
    }))

  it.effect("an incremental pull updates a changed figure in place, removes a deleted one and leaves the rest", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine } = yield* linkedLab
      const first = yield* remotes.pushFromOutside(url, "main", { "a.png": png(1), "b.pdf": PDF, "c.jpg": png(3), "x.md": "x" })
      yield* engine.pull(labId, Option.none(), false)
      const before = yield* gitFigures(labId)

      const second = yield* remotes.pushFromOutside(url, "main", { "a.png": png(9), "b.pdf": null, "d.webp": png(4), "x.md": "y" })
      yield* engine.pull(labId, Option.none(), false)
      const after = yield* gitFigures(labId)
      expect([...after.keys()].sort()).toEqual(["/a.png", "/c.jpg", "/d.webp"])
      // changed: same record, new blob and commit
      expect(after.get("/a.png")).toMatchObject({ id: before.get("/a.png")?.id, blobId: blobId(png(9)), commit: second.commit })
      expect(after.get("/a.png")?.createdAt).toEqual(before.get("/a.png")?.createdAt)
      // untouched: still at the commit it was last seen changing in
      expect(after.get("/c.jpg")).toEqual(before.get("/c.jpg"))
      expect(after.get("/c.jpg")?.commit).toBe(first.commit)
      expect(after.get("/d.webp")).toMatchObject({ mediaType: "image/webp", commit: second.commit })

      const activity = yield* ActivityRepo
      const figureEntries = (yield* activity.list(systemLab(labId), { limit: 20, cursor: Option.none() })).items.filter((e) => e.kind === "figure.synced")
      expect(figureEntries.map((e) => e.data)).toEqual([
        { added: 1, updated: 1, removed: 1, sha: second.commit.slice(0, 7) },
        { added: 3, updated: 0, removed: 0, sha: first.commit.slice(0, 7) }
      ])
    }))

  it.effect("a pull that changes no figure writes no figure entry", () =>
    Effect.gen(function* () {
      const activity = yield* ActivityRepo
      const { labId, url, remotes, engine } = yield* linkedLab
      yield* remotes.pushFromOutside(url, "main", { "a.png": png(1) })
      yield* engine.pull(labId, Option.none(), false)
      yield* remotes.pushFromOutside(url, "main", { "notes.md": "n" })
      yield* engine.pull(labId, Option.none(), false)
      const kinds = (yield* activity.list(systemLab(labId), { limit: 20, cursor: Option.none() })).items.map((e) => e.kind)
      expect(kinds.filter((k) => k === "figure.synced")).toHaveLength(1)
      expect(kinds.filter((k) => k === "sync")).toHaveLength(2)
    }))

  it.effect("a subtree pull reconciles the figures of that directory only", () =>
    Effect.gen(function* () {
      const { labId, url, remotes, engine } = yield* linkedLab
      yield* remotes.pushFromOutside(url, "main", { "docs/a.png": png(1), "docs/b.png": png(2), "src/c.png": png(3) })
      yield* engine.pull(labId, Option.none(), false)
      yield* remotes.pushFromOutside(url, "main", { "docs/a.png": null, "src/c.png": null })
      yield* engine.pull(labId, Option.some("/docs"), false)
      expect([...(yield* gitFigures(labId)).keys()].sort()).toEqual(["/docs/b.png", "/src/c.png"])
      // the full pull applies the rest
      yield* engine.pull(labId, Option.none(), false)
      expect([...(yield* gitFigures(labId)).keys()]).toEqual(["/docs/b.png"])
    }))

  it.effect("a first pull of a new repository forgets the figures of the old one; registered figures stay", () =>
    Effect.gen(function* () {
      const sync = yield* SyncRepo
      const figures = yield* FiguresRepo
      const { labId, url, remotes, engine } = yield* linkedLab
      yield* remotes.pushFromOutside(url, "main", { "old.png": png(1), "kept.png": png(2) })
      yield* engine.pull(labId, Option.none(), false)
      const now = new Date()
      yield* figures.insert({
        id: FigureId.make("fig_registered"),
        labId,
        source: "api",
        title: "Registered",
        caption: null,
        path: "/old.png",
        url: null,
        mediaType: "image/png",
        size: null,
        blobId: null,
        commit: null,
        experimentId: "exp_1",
        createdAt: now,
        updatedAt: now
      })
      // link another repository: the next pull starts from scratch
      const other = `${url.replace(/\.git$/, "")}-2.git`
      yield* sync.saveLink({ labId, repo: other, repoKey: repoKeyOf(other), defaultBranch: "main", autoPush: false, token: Option.none() })
      yield* remotes.pushFromOutside(other, "main", { "kept.png": png(2), "new.gif": png(5) })
      yield* engine.pull(labId, Option.none(), false)
      expect([...(yield* gitFigures(labId)).keys()].sort()).toEqual(["/kept.png", "/new.gif"])
      expect(Option.isSome(yield* figures.find(systemLab(labId), FigureId.make("fig_registered")))).toBe(true)
    }))
})
