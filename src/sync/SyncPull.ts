import { Effect, Fiber, Option } from "effect"
import type { PulledFile, StoredState } from "../files/FilesRepo.js"
import { toRepoPath, trimTrailingSlashes } from "../files/Paths.js"
import type { GitFigureFile } from "../figures/Figure.js"
import { isFigurePath } from "../figures/GitFigures.js"
import type { LabId } from "../labs/LabId.js"
import { countedNotRefused } from "../quotas/RecordsQuota.js"
import { type EngineDeps, emptyResult, linkOf, remoteOf } from "./EngineDeps.js"
import type { GitChange, Head } from "./Git.js"
import { lookupPaths, type PullPlan, planPull, type PullRead, removalsOf } from "./PullPlan.js"
import { type RepoLink, repoNameOf, type SyncResult } from "./RepoLink.js"
import { judgeContent, MAX_FILE_BYTES } from "./Rules.js"
import { type LeftOutFile, recordLeftOut } from "./SkippedFiles.js"

/** A pull reads and writes changed files in batches of at most this many files and bytes: memory stays bounded. */
const BATCH_FILES = 2000
const BATCH_BYTES = 16 * 1024 * 1024
/** The first batch is small, so the database starts writing while the next one is read. */
const FIRST_BATCH_FILES = 250

/**
 * The blobs read so far: figures found, and paths whose blob is not text (skipped, and removed if from git); of
 * those, the ones git does not call binary, with the reason they are left out.
 */
interface Reading {
  readonly figuresFound: Array<GitFigureFile>
  readonly unreadable: Array<string>
  readonly leftOut: Array<LeftOutFile>
}

/** The changed blobs from `start` on, as files to store (the text ones: the others are skipped), up to a batch. */
const readBatch = (deps: EngineDeps, labId: LabId, toRead: ReadonlyArray<PullRead>, reading: Reading, start: number) =>
  Effect.gen(function* () {
    const batch: Array<PulledFile> = []
    const now = new Date()
    let next = start
    let batchBytes = 0
    const limit = start === 0 ? FIRST_BATCH_FILES : BATCH_FILES
    while (next < toRead.length && next - start < limit && batchBytes < BATCH_BYTES) {
      const item = toRead[next++]
      if (item === undefined) break
      const { path, oid, expected } = item
      // a blob over the 1 MiB rule is only measured (its size is in its pack entry), never read
      const blob = yield* deps.git.readBlob(labId, oid, MAX_FILE_BYTES)
      batchBytes += Option.match(blob.content, { onNone: () => 0, onSome: (c) => c.byteLength })
      // figures (images, PDFs): recorded when read, forgotten when gone from the tree (docs/figures.md)
      if (isFigurePath(path)) reading.figuresFound.push({ path, oid, size: blob.size })
      const content = judgeContent(blob.size, Option.getOrUndefined(blob.content))
      if (content.kind !== "text") {
        reading.unreadable.push(path)
        if (content.kind === "left-out") reading.leftOut.push({ path, reason: content.reason })
        continue
      }
      batch.push({
        file: { labId, path, content: content.text, size: blob.size, sha: oid, source: "git", fromGit: true, createdAt: now, updatedAt: now },
        // stored only if the path is still as read here: a write acknowledged since wins (FilesRepo.storePulled)
        expected
      })
    }
    return { batch, next }
  })

const record = (deps: EngineDeps, link: RepoLink, head: Head, subPath: Option.Option<string>, result: SyncResult) =>
  Effect.gen(function* () {
    // a subtree pull leaves the rest unsynced: the last synced commit stays
    yield* deps.links.recordSynced(link.labId, Option.isNone(subPath) ? Option.some(head.commit) : Option.none())
    const name = repoNameOf(link.repo)
    const short = head.commit.slice(0, 7)
    yield* deps.activity.record({
      labId: link.labId,
      kind: "sync",
      ref: head.commit,
      actor: "sync",
      message: `Synced ${name}: ${result.pulled} added, ${result.updated} updated, ${result.removed} removed (${short})`,
      data: {
        repo: name,
        added: result.pulled,
        updated: result.updated,
        removed: result.removed,
        skipped: result.skipped,
        sha: short,
        ...(Option.isSome(subPath) ? { subPath: subPath.value } : {})
      }
    })
  })

/** The entries that changed: the diff from the last synced commit, or the whole tree (None: a full reconcile). */
const changesOf = (deps: EngineDeps, labId: LabId, link: RepoLink, head: Head, subPath: Option.Option<string>) =>
  Effect.gen(function* () {
    const base = Option.fromNullable(link.lastSyncSha)
    // the root as subPath ("/") is the whole tree: no prefix (an empty one would match nothing and remove everything)
    const prefix = Option.filter(Option.map(subPath, (p) => trimTrailingSlashes(toRepoPath(p))), (p) => p.length > 0)
    // the diff from the last synced commit; when that commit is gone from the local store (git data lost,
    // a new disk), a full reconcile instead, or the lab would never sync (nor push) again
    const incremental: Option.Option<ReadonlyArray<GitChange>> = Option.isNone(base) || Option.isSome(subPath)
      ? Option.none()
      : Option.getRight(yield* Effect.either(deps.git.diff(labId, base, head.commit, prefix)))
    if (Option.isSome(incremental)) return { reconcile: false, changes: incremental.value }
    return { reconcile: true, changes: yield* deps.git.diff(labId, Option.none(), head.commit, prefix) }
  })

/** The changes, the stored files they concern and the plan made of them. */
const planOf = (deps: EngineDeps, labId: LabId, link: RepoLink, head: Head, subPath: Option.Option<string>) =>
  Effect.gen(function* () {
    const { changes, reconcile } = yield* changesOf(deps, labId, link, head, subPath)
    const pending = yield* deps.links.pendingPaths(labId)
    // a reconcile reads every stored file below its directory in one scan (a first sync of 50,000 files would
    // otherwise look each one up); a diff only the paths it names
    const dir = Option.match(subPath, { onNone: () => "/", onSome: (p) => `${trimTrailingSlashes(p)}/` })
    const stored = reconcile
      ? yield* deps.files.statesUnder(labId, dir)
      : yield* deps.files.states(labId, lookupPaths(changes, pending))
    const figures = reconcile ? yield* deps.figures.pathsUnder(labId, dir) : []
    return { plan: planPull(changes, stored, pending, { reconcile, figures }), stored }
  })

/**
 * Store the plan's files a batch at a time, so memory stays bounded on big trees: the database stores one batch
 * while the next is read from git (one write in flight, on the transaction's connection).
 */
// the writer fibers are scoped: a failed read ends them before the transaction they write in rolls back and its
// connection goes back to the pool
const storeAll = (deps: EngineDeps, labId: LabId, plan: PullPlan, reading: Reading, first: { batch: ReadonlyArray<PulledFile>; next: number }) =>
  Effect.scoped(Effect.gen(function* () {
    let added = 0
    let updated = 0
    const store = (batch: ReadonlyArray<PulledFile>) =>
      Effect.map(deps.files.storePulled(labId, batch), (r) => {
        added += r.added.length
        updated += r.updated.length
      })
    let writing = yield* Effect.forkScoped(store(first.batch))
    for (let start = first.next; start < plan.toRead.length; ) {
      const { batch, next } = yield* readBatch(deps, labId, plan.toRead, reading, start)
      start = next
      yield* Fiber.join(writing)
      writing = yield* Effect.forkScoped(store(batch))
    }
    yield* Fiber.join(writing)
    return { added, updated }
  }))

/** The plan carried out in one transaction: files, figures, sync state and the activity entry. */
const carryOut = (
  deps: EngineDeps,
  labId: LabId,
  pulled: { link: RepoLink; head: Head; subPath: Option.Option<string> },
  planned: { plan: PullPlan; stored: ReadonlyMap<string, StoredState> }
) =>
  Effect.gen(function* () {
    const { plan, stored } = planned
    const reading: Reading = { figuresFound: [], unreadable: [], leftOut: [] }
    // the first batch is read before the transaction opens: the database is not held while git is first read
    const first = yield* readBatch(deps, labId, plan.toRead, reading, 0)
    return yield* Effect.gen(function* () {
      // counted in the records quota, never refused by it, as stored bytes
      yield* countedNotRefused(deps.sql)
      const { added, updated } = yield* storeAll(deps, labId, plan, reading, first)
      const removed = yield* deps.files.removePulled(labId, removalsOf([...plan.gone, ...reading.unreadable], stored))
      yield* deps.figures.apply(labId, pulled.head.commit, reading.figuresFound, plan.figuresGone)
      const skipped = plan.skipped + reading.unreadable.length
      const result: SyncResult = { ok: true, pulled: added, updated, skipped, removed: removed.length, sha: pulled.head.commit }
      yield* record(deps, pulled.link, pulled.head, pulled.subPath, result)
      yield* recordLeftOut(deps, labId, pulled.head, reading.leftOut)
      return result
    }).pipe(deps.sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
  })

/**
 * Apply the remote tree at `head` to the lab's files: the diff from the last
 * synced commit, or a full reconcile (first sync, new link, or a subtree).
 * Files, sync state and the activity entry land in one transaction.
 */
export const apply = (deps: EngineDeps, labId: LabId, link: RepoLink, head: Head, subPath: Option.Option<string>, announce: boolean) =>
  Effect.gen(function* () {
    if (Option.isNone(subPath) && link.lastSyncSha === head.commit) {
      if (announce) yield* record(deps, link, head, subPath, emptyResult(head.commit))
      else yield* deps.links.recordSynced(labId, Option.some(head.commit))
      return emptyResult(head.commit)
    }
    const planned = yield* planOf(deps, labId, link, head, subPath)
    return yield* carryOut(deps, labId, { link, head, subPath }, planned)
  })

/** Fetch the default branch and apply it. `announce`: record activity even when nothing changed. */
export const pull = (deps: EngineDeps, labId: LabId, subPath: Option.Option<string>, announce: boolean) =>
  Effect.gen(function* () {
    const link = yield* linkOf(deps, labId)
    const head = yield* deps.git.fetch(labId, yield* remoteOf(deps, link))
    if (Option.isNone(head)) {
      yield* deps.links.recordSynced(labId, Option.none())
      return emptyResult("")
    }
    return yield* apply(deps, labId, link, head.value, subPath, announce)
  })
