import { Effect, Either, Option } from "effect"
import { normalizePath } from "../files/Paths.js"
import type { LabId } from "../labs/LabId.js"
import { type EngineDeps, linkOf, remoteOf } from "./EngineDeps.js"
import { GitError, type GitRemote, type Head } from "./Git.js"
import { CHUNK_WRITES, changeOf, chunkOf, lastWrites } from "./OutboxCommits.js"
import type { RepoLink } from "./RepoLink.js"
import { apply } from "./SyncPull.js"
import type { OutboxEntry } from "./SyncRepo.js"

/** How often one push is retried on top of a moved remote before the job fails (and backs off). */
const MAX_REJECTIONS = 5

/**
 * The oldest pending outbox entries git can commit, up to a chunk. An entry whose path git refuses (queued before
 * the files API refused such paths) can never be pushed: it is set aside with the reason, so the writes after it
 * still land.
 */
const pushable = (deps: EngineDeps, labId: LabId) =>
  Effect.gen(function* () {
    const entries = yield* deps.links.pending(labId, CHUNK_WRITES)
    const accepted: Array<OutboxEntry> = []
    for (const entry of entries) {
      const refusal = Either.getLeft(normalizePath(entry.path))
      if (Option.isNone(refusal)) {
        accepted.push(entry)
        continue
      }
      const reason = `git refuses this path (${refusal.value}); it can never be pushed`
      yield* deps.links.setAside(entry.id, reason)
      yield* Effect.logWarning(`outbox of ${labId}: ${entry.path} set aside: ${reason}`)
    }
    return accepted
  })

/**
 * Writes that landed (or need no commit): out of the outbox, their files git files from now on (README:
 * "Auto-push"), and, after our own push, the new tip synced already (its webhook will find nothing to do).
 */
const landed = (deps: EngineDeps, labId: LabId, entries: ReadonlyArray<OutboxEntry>, tip: Option.Option<string>) =>
  Effect.gen(function* () {
    yield* deps.links.done(entries.map((e) => e.id))
    yield* deps.files.markPushed(labId, lastWrites(entries))
    if (Option.isSome(tip)) yield* deps.links.recordSynced(labId, tip)
  }).pipe(deps.sql.withTransaction, Effect.orDie)

/** Did the push to `commit`, whose answer was lost, land? Not when the remote is still where it was built on. */
const didLand = (deps: EngineDeps, labId: LabId, remote: GitRemote, link: RepoLink, head: Option.Option<Head>, commit: string) =>
  Option.match(head, {
    onNone: () => Effect.succeed(false),
    onSome: (h) =>
      h.commit === commit
        ? Effect.succeed(true)
        : h.commit === link.lastSyncSha
          ? Effect.succeed(false)
          : deps.git.reaches(labId, remote, h.commit, commit)
  })

/** Where one round of the push stands: the entries it took, the remote and its head. */
interface Round {
  readonly entries: ReadonlyArray<OutboxEntry>
  readonly link: RepoLink
  readonly remote: GitRemote
  readonly head: Option.Option<Head>
}

/**
 * A push whose answer was lost: its writes are marked with the commit it moved the branch to. Landed: they are
 * done (the count); not landed: the marks are cleared and they are pushed again (0).
 */
const settleLost = (deps: EngineDeps, labId: LabId, round: Round, lost: string) =>
  Effect.gen(function* () {
    const carried = round.entries.filter((e) => e.pushCommit === lost)
    if (yield* didLand(deps, labId, round.remote, round.link, round.head, lost)) {
      // the lab is as that commit now (its writes, on the head the pull had applied): the next pull diffs from
      // it, or a later change that puts a path back as it was before the commit would never reach the lab
      yield* landed(deps, labId, carried, Option.some(lost))
      return carried.length
    }
    yield* deps.links.clearPushing(labId)
    return 0
  })

/** Commit a chunk on the remote head and push it: the count landed, or undefined when the remote moved meanwhile. */
const pushChunk = (deps: EngineDeps, labId: LabId, round: Round, rejected: () => number) =>
  Effect.gen(function* () {
    const { head, remote } = round
    const chunk = chunkOf(round.entries)
    const heads = yield* deps.git.commitAll(labId, head, chunk.map(changeOf))
    const tip = Option.flatten(Option.fromNullable(heads.at(-1)))
    // writes that match the remote already need no commit
    if (Option.isNone(tip) || (Option.isSome(head) && tip.value.commit === head.value.commit)) {
      yield* landed(deps, labId, chunk, Option.none())
      return chunk.length
    }
    yield* deps.links.markPushing(chunk.map((e) => e.id), tip.value.commit)
    const pushed = yield* deps.git.push(labId, remote, tip.value.commit, Option.map(head, (h) => h.commit)).pipe(
      Effect.as(true),
      Effect.catchTag("PushRejected", (rejection) =>
        rejected() >= MAX_REJECTIONS
          ? Effect.zipRight(deps.links.clearPushing(labId), Effect.fail(new GitError({ message: rejection.message })))
          : Effect.as(deps.links.clearPushing(labId), false)
      )
    )
    if (!pushed) return undefined
    yield* landed(deps, labId, chunk, Option.some(tip.value.commit))
    return chunk.length
  })

/**
 * Push the outbox a chunk at a time: each write its own commit, built on the remote head, the chunk one push. A
 * remote that moved is pulled first (so the lab's files include the outside change). Before a push, its writes
 * are marked with the commit it moves the branch to: if its answer is lost (a crash, a cut connection), the next
 * attempt asks the remote whether that commit landed, and never commits those writes twice. `stopping` is asked
 * before each chunk: on shutdown the push ends at a chunk boundary (the rest stays queued for the next start). It
 * ends once a chunk that took every pending write has landed: writes made meanwhile are the next job's, which the
 * supervisor paces (PushPacing.ts). A backlog still drains chunk after chunk.
 */
export const push = (deps: EngineDeps, labId: LabId, stopping: Effect.Effect<boolean> = Effect.succeed(false)) =>
  Effect.gen(function* () {
    let total = 0
    let rejections = 0
    for (;;) {
      if (yield* stopping) return total
      const entries = yield* pushable(deps, labId)
      if (entries.length === 0) return total
      const link = yield* linkOf(deps, labId)
      const remote = yield* remoteOf(deps, link)
      const round: Round = { entries, link, remote, head: yield* deps.git.fetch(labId, remote) }
      // any marked entry, not only the oldest: on PostgreSQL a write with a lower id can commit after a push took
      // later ones (ids are handed out before commit)
      const lost = entries.find((e) => e.pushCommit !== null)?.pushCommit ?? null
      if (lost !== null) {
        const settled = yield* settleLost(deps, labId, round, lost)
        total += settled
        if (settled > 0) continue
      }
      if (Option.isSome(round.head) && link.lastSyncSha !== round.head.value.commit) {
        yield* apply(deps, labId, link, round.head.value, Option.none(), false)
      }
      const pushed = yield* pushChunk(deps, labId, round, () => ++rejections)
      if (pushed === undefined) continue
      total += pushed
      // every write pending when the round began has landed: those made since wait for the lab's next push turn
      // (PushPacing.ts), or a busy lab would push each write as it comes and keep its branch moving
      if (pushed === entries.length && entries.length < CHUNK_WRITES) return total
    }
  }).pipe(Effect.tapError((e) => deps.links.noteAttempt(labId, e.message)))
