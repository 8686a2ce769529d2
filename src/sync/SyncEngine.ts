import { SqlClient } from "@effect/sql"
import { Effect, Either, Fiber, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { SecretBox } from "../common/SecretBox.js"
import { FilesRepo, type PulledFile } from "../files/FilesRepo.js"
import { normalizePath, toRepoPath } from "../files/Paths.js"
import type { GitFigureFile } from "../figures/Figure.js"
import { GitFigures, isFigurePath } from "../figures/GitFigures.js"
import { Git, GitError, type GitRemote, type Head } from "./Git.js"
import { type RepoLink, repoNameOf, type SyncResult, tokenIsBound } from "./RepoLink.js"
import { addReconciled, planChanges, removalsOf } from "./PullPlan.js"
import { countedNotRefused } from "../quotas/RecordsQuota.js"
import { decodeText, MAX_FILE_BYTES } from "./Rules.js"
import { CHUNK_WRITES, changeOf, chunkOf, lastWrites } from "./OutboxCommits.js"
import { type OutboxEntry, SyncRepo } from "./SyncRepo.js"

/** A pull reads and writes changed files in batches of at most this many files and bytes: memory stays bounded. */
const BATCH_FILES = 2000
const BATCH_BYTES = 16 * 1024 * 1024
/** The first batch is small, so the database starts writing while the next one is read. */
const FIRST_BATCH_FILES = 250

/** How often one push is retried on top of a moved remote before the job fails (and backs off). */
const MAX_REJECTIONS = 5

const emptyResult = (sha: string): SyncResult => ({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha })

/**
 * The git work of one lab: pull (remote -> files) and push (outbox -> remote).
 * Only the lab's worker (SyncSupervisor) calls these, one at a time.
 */
export class SyncEngine extends Effect.Service<SyncEngine>()("SyncEngine", {
  dependencies: [SyncRepo.Default, FilesRepo.Default, ActivityRepo.Default, GitFigures.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const git = yield* Git
    const box = yield* SecretBox
    const links = yield* SyncRepo
    const files = yield* FilesRepo
    const activity = yield* ActivityRepo
    const figures = yield* GitFigures

    /** The remote, with the stored token only when the repository is on the origin the token was given for. */
    const remoteOf = (link: RepoLink): Effect.Effect<GitRemote, GitError> =>
      link.tokenSealed === null || !tokenIsBound(link)
        ? Effect.succeed({ url: link.repo, branch: link.defaultBranch, token: Option.none() })
        : Effect.map(
            Effect.mapError(box.open(link.tokenSealed), (e) => new GitError({ message: `the stored token: ${e.message}` })),
            (token) => ({ url: link.repo, branch: link.defaultBranch, token: Option.some(token) })
          )

    const linkOf = (labId: string) =>
      Effect.flatMap(
        links.link(labId),
        Option.match({
          onNone: () => Effect.fail(new GitError({ message: "the lab has no linked repository" })),
          onSome: Effect.succeed
        })
      )

    /**
     * Apply the remote tree at `head` to the lab's files: the diff from the last
     * synced commit, or a full reconcile (first sync, new link, or a subtree).
     * Files, sync state and the activity entry land in one transaction.
     */
    const apply = (link: RepoLink, head: Head, subPath: Option.Option<string>, announce: boolean) =>
      Effect.gen(function* () {
        const labId = link.labId
        const base = Option.fromNullable(link.lastSyncSha)
        if (Option.isNone(subPath) && Option.contains(base, head.commit)) {
          if (announce) yield* record(link, head, subPath, emptyResult(head.commit))
          else yield* links.recordSynced(labId, Option.some(head.commit))
          return emptyResult(head.commit)
        }
        // the root as subPath ("/") is the whole tree: no prefix (an empty one would match nothing and remove everything)
        const prefix = Option.filter(Option.map(subPath, (p) => toRepoPath(p).replace(/\/+$/, "")), (p) => p.length > 0)
        // the diff from the last synced commit; when that commit is gone from the local store (git data lost,
        // a new disk), a full reconcile instead, or the lab would never sync (nor push) again
        const incremental = Option.isNone(base) || Option.isSome(subPath)
          ? Option.none()
          : Option.getRight(yield* Effect.either(git.diff(labId, base, head.commit, prefix)))
        const reconcile = Option.isNone(incremental)
        const changes = Option.isSome(incremental) ? incremental.value : yield* git.diff(labId, Option.none(), head.commit, prefix)
        const pending = yield* links.pendingPaths(labId)
        const plan = planChanges(changes, pending)
        // a reconcile reads every stored file below its directory in one scan (a first sync of 50,000 files would
        // otherwise look each one up); a diff only the paths it names
        const dir = Option.match(subPath, { onNone: () => "/", onSome: (p) => `${p.replace(/\/+$/, "")}/` })
        const stored = reconcile
          ? yield* files.statesUnder(labId, dir)
          : yield* files.states(labId, [...plan.wanted.map((w) => w.path), ...plan.gone])
        if (reconcile) {
          addReconciled(plan, stored, pending)
          for (const path of yield* figures.pathsUnder(labId, dir)) {
            if (!plan.inTree.has(path)) plan.figuresGone.add(path)
          }
        }
        const toRead = plan.wanted.filter(({ path, oid }) => stored.get(path)?.sha !== oid)
        // figures (images, PDFs): recorded when read below, forgotten when gone from the tree (docs/figures.md)
        const figuresFound: Array<GitFigureFile> = []
        const now = new Date()

        /** The changed blobs from `start` on, as files to store (the text ones: the others are skipped), up to a batch. */
        const readBatch = (start: number) =>
          Effect.gen(function* () {
            const batch: Array<PulledFile> = []
            let next = start
            let batchBytes = 0
            const limit = start === 0 ? FIRST_BATCH_FILES : BATCH_FILES
            while (next < toRead.length && next - start < limit && batchBytes < BATCH_BYTES) {
              const item = toRead[next++]
              if (item === undefined) break
              const { path, oid } = item
              // a blob over the 1 MiB rule is only measured (its size is in its pack entry), never read
              const blob = yield* git.readBlob(labId, oid, MAX_FILE_BYTES)
              batchBytes += Option.match(blob.content, { onNone: () => 0, onSome: (c) => c.byteLength })
              if (isFigurePath(path)) figuresFound.push({ path, oid, size: blob.size })
              const text = Option.isSome(blob.content) ? decodeText(blob.content.value) : undefined
              if (text === undefined) {
                plan.skipped++
                plan.gone.add(path)
                continue
              }
              const current = stored.get(path)
              batch.push({
                file: { labId, path, content: text, size: blob.size, sha: oid, source: "git", fromGit: true, createdAt: now, updatedAt: now },
                // stored only if the path is still as read here: a write acknowledged since wins (FilesRepo.storePulled)
                expected: current?.sha ?? null
              })
            }
            return { batch, next }
          })

        // the first batch is read before the transaction opens: the database is not held while git is first read
        const first = yield* readBatch(0)
        return yield* Effect.gen(function* () {
          // counted in the records quota, never refused by it, as stored bytes
          yield* countedNotRefused(sql)
          // a batch at a time, so memory stays bounded on big trees; the database stores one batch while the
          // next is read from git (one write in flight, on the transaction's connection)
          let added = 0
          let updated = 0
          const store = (batch: ReadonlyArray<PulledFile>) =>
            Effect.map(files.storePulled(labId, batch), (r) => {
              added += r.added.length
              updated += r.updated.length
            })
          let writing = yield* Effect.fork(store(first.batch))
          for (let start = first.next; start < toRead.length; ) {
            const { batch, next } = yield* readBatch(start)
            start = next
            yield* Fiber.join(writing)
            writing = yield* Effect.fork(store(batch))
          }
          yield* Fiber.join(writing)
          const removed = yield* files.removePulled(labId, removalsOf(plan, stored))
          yield* figures.apply(labId, head.commit, figuresFound, [...plan.figuresGone].filter(isFigurePath))
          const result: SyncResult = { ok: true, pulled: added, updated, skipped: plan.skipped, removed: removed.length, sha: head.commit }
          yield* record(link, head, subPath, result)
          return result
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
      })

    const record = (link: RepoLink, head: Head, subPath: Option.Option<string>, result: SyncResult) =>
      Effect.gen(function* () {
        // a subtree pull leaves the rest unsynced: the last synced commit stays
        yield* links.recordSynced(link.labId, Option.isNone(subPath) ? Option.some(head.commit) : Option.none())
        const name = repoNameOf(link.repo)
        const short = head.commit.slice(0, 7)
        yield* activity.record({
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

    /** Fetch the default branch and apply it. `announce`: record activity even when nothing changed. */
    const pull = (labId: string, subPath: Option.Option<string>, announce: boolean) =>
      Effect.gen(function* () {
        const link = yield* linkOf(labId)
        const head = yield* git.fetch(labId, yield* remoteOf(link))
        if (Option.isNone(head)) {
          yield* links.recordSynced(labId, Option.none())
          return emptyResult("")
        }
        return yield* apply(link, head.value, subPath, announce)
      })

    /**
     * The oldest pending outbox entries git can commit, up to a chunk. An entry whose path git refuses (queued before
     * the files API refused such paths) can never be pushed: it is set aside with the reason, so the writes after it
     * still land.
     */
    const pushable = (labId: string) =>
      Effect.gen(function* () {
        const entries = yield* links.pending(labId, CHUNK_WRITES)
        const accepted: Array<OutboxEntry> = []
        for (const entry of entries) {
          const refusal = Either.getLeft(normalizePath(entry.path))
          if (Option.isNone(refusal)) {
            accepted.push(entry)
            continue
          }
          const reason = `git refuses this path (${refusal.value}); it can never be pushed`
          yield* links.setAside(entry.id, reason)
          yield* Effect.logWarning(`outbox of ${labId}: ${entry.path} set aside: ${reason}`)
        }
        return accepted
      })

    /**
     * Writes that landed (or need no commit): out of the outbox, their files git files from now on (README:
     * "Auto-push"), and, after our own push, the new tip synced already (its webhook will find nothing to do).
     */
    const landed = (labId: string, entries: ReadonlyArray<OutboxEntry>, tip: Option.Option<string>) =>
      Effect.gen(function* () {
        yield* links.done(entries.map((e) => e.id))
        yield* files.markPushed(labId, lastWrites(entries))
        if (Option.isSome(tip)) yield* links.recordSynced(labId, tip)
      }).pipe(sql.withTransaction, Effect.orDie)

    /**
     * Push the outbox a chunk at a time: each write its own commit, built on the remote head, the chunk one push. A
     * remote that moved is pulled first (so the lab's files include the outside change). Before a push, its writes
     * are marked with the commit it moves the branch to: if its answer is lost (a crash, a cut connection), the next
     * attempt asks the remote whether that commit landed, and never commits those writes twice. `stopping` is asked
     * before each chunk: on shutdown the push ends at a chunk boundary (the rest stays queued for the next start).
     */
    const push = (labId: string, stopping: Effect.Effect<boolean> = Effect.succeed(false)) =>
      Effect.gen(function* () {
        let total = 0
        for (let rejections = 0; ; ) {
          if (yield* stopping) return total
          const entries = yield* pushable(labId)
          if (entries.length === 0) return total
          const link = yield* linkOf(labId)
          const remote = yield* remoteOf(link)
          const head = yield* git.fetch(labId, remote)
          // any marked entry, not only the oldest: on PostgreSQL a write with a lower id can commit after a push took
          // later ones (ids are handed out before commit)
          const lost = entries.find((e) => e.pushCommit !== null)?.pushCommit ?? null
          if (lost !== null) {
            const carried = entries.filter((e) => e.pushCommit === lost)
            if (yield* didLand(labId, remote, link, head, lost)) {
              // the lab is as that commit now (its writes, on the head the pull had applied): the next pull diffs from
              // it, or a later change that puts a path back as it was before the commit would never reach the lab
              yield* landed(labId, carried, Option.some(lost))
              total += carried.length
              continue
            }
            yield* links.clearPushing(labId)
          }
          if (Option.isSome(head) && !Option.contains(Option.fromNullable(link.lastSyncSha), head.value.commit)) {
            yield* apply(link, head.value, Option.none(), false)
          }
          const chunk = chunkOf(entries)
          const heads = yield* git.commitAll(labId, head, chunk.map(changeOf))
          const tip = Option.flatten(Option.fromNullable(heads.at(-1)))
          // writes that match the remote already need no commit
          if (Option.isNone(tip) || (Option.isSome(head) && tip.value.commit === head.value.commit)) {
            yield* landed(labId, chunk, Option.none())
            total += chunk.length
            continue
          }
          yield* links.markPushing(chunk.map((e) => e.id), tip.value.commit)
          const pushed = yield* git.push(labId, remote, tip.value.commit, Option.map(head, (h) => h.commit)).pipe(
            Effect.as(true),
            Effect.catchTag("PushRejected", (rejected) =>
              ++rejections >= MAX_REJECTIONS
                ? Effect.zipRight(links.clearPushing(labId), Effect.fail(new GitError({ message: rejected.message })))
                : Effect.as(links.clearPushing(labId), false)
            )
          )
          if (!pushed) continue
          yield* landed(labId, chunk, Option.some(tip.value.commit))
          total += chunk.length
        }
      }).pipe(Effect.tapError((e) => links.noteAttempt(labId, e.message)))

    /** Did the push to `commit`, whose answer was lost, land? Not when the remote is still where it was built on. */
    const didLand = (labId: string, remote: GitRemote, link: RepoLink, head: Option.Option<Head>, commit: string) =>
      Option.match(head, {
        onNone: () => Effect.succeed(false),
        onSome: (h) =>
          h.commit === commit
            ? Effect.succeed(true)
            : h.commit === link.lastSyncSha
              ? Effect.succeed(false)
              : git.reaches(labId, remote, h.commit, commit)
      })

    return { pull, push }
  })
}) {}

