import { SqlClient } from "@effect/sql"
import { Cause, Effect, FiberSet, Option, Stream } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { Conflict, NotFound } from "../http/Errors.js"
import type { Cursor } from "../http/Pagination.js"
import { Quotas } from "../quotas/Quotas.js"
import { Archive } from "./Archive.js"
import { BACKUP_MACHINE, type Backup, RESTORE_MACHINE } from "./Backup.js"
import { type BackupFilter, BackupsRepo } from "./BackupsRepo.js"

/** Bytes per read while streaming an archive out. */
const DOWNLOAD_CHUNK = 1024 * 1024

const inProgress = (status: string | undefined) => status === "pending" || status === "running"

const tagged = (u: unknown, tag: string): u is { readonly _tag: string; readonly message: string; readonly cause?: unknown } =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === tag && "message" in u

/** A failure as the backup's error field says it: the archive's and the database's own words, anything else generically. */
const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Option.getOrUndefined(Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause)))
  if (tagged(error, "ArchiveError")) return error.message
  if (tagged(error, "SqlError")) {
    const reason = error.cause instanceof Error ? error.cause.message : error.message
    return `database error: ${reason}`
  }
  return "internal error; see the service log"
}

/** A refused archive is the user's business (a warning); anything else is ours (an error). */
const report = (message: string, cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  const failure = Option.getOrUndefined(Cause.failureOption(cause))
  return tagged(failure, "ArchiveError") ? Effect.logWarning(`${message}: ${failure.message}`) : Effect.logError(message, cause)
}

/**
 * Lab snapshots. A backup or a restore is asked for (202, pending), then runs
 * in the background on this instance; its status says how far it got. One
 * backup or restore runs per lab at a time: asking again for the one running
 * answers it again, anything else waits for it to end (409).
 */
export class Backups extends Effect.Service<Backups>()("Backups", {
  dependencies: [BackupsRepo.Default, Archive.Default, ActivityRepo.Default, Quotas.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BackupsRepo
    const archive = yield* Archive
    const activity = yield* ActivityRepo
    const quotas = yield* Quotas
    const jobs = yield* FiberSet.make()

    // a backup or restore of a process that stopped will never finish: say so
    yield* repo.failInterrupted(new Date())

    const tx = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", (e) => Effect.die(e)))

    const found = (backup: Option.Option<Backup>, id: string) =>
      Option.match(backup, {
        onNone: () => Effect.fail(new NotFound({ message: `no backup ${id} in this lab` })),
        onSome: Effect.succeed
      })

    const log = (backup: Backup, actor: string, kind: string, message: string, data: Record<string, unknown> = {}) =>
      activity.record({ labId: backup.labId, kind, ref: backup.id, actor, message, data })

    /** Someone else's backup or restore in progress in the lab: 409 naming it. */
    const busy = (others: ReadonlyArray<Backup>) => {
      const other = others[0]
      if (other === undefined) return Effect.void
      return Effect.fail(
        new Conflict({
          message: inProgress(other.restore?.status)
            ? `a restore of backup ${other.id} is in progress in this lab; retry when it has ended`
            : `backup ${other.id} is ${other.status} in this lab; retry when it has ended`
        })
      )
    }

    const runBackup = (backup: Backup) =>
      Effect.gen(function* () {
        yield* tx(
          Effect.gen(function* () {
            yield* transition(`backup ${backup.id}`, BACKUP_MACHINE, backup.status, "running")
            yield* repo.markRunning(backup.id, new Date())
            yield* log(backup, backup.createdBy, "backup.started", "Backup started")
          })
        )
        const exit = yield* Effect.exit(archive.dump(backup.labId))
        if (exit._tag === "Success") {
          const dump = exit.value
          yield* tx(
            Effect.gen(function* () {
              // the archive is stored bytes too (QUOTA_STORED_BYTES): one that does not fit is not kept
              const fits = yield* Effect.either(quotas.storedBytes(backup.labId, dump.archive.byteLength, "this backup's archive"))
              if (fits._tag === "Left") {
                yield* repo.fail(backup.id, fits.left.message, new Date())
                yield* log(backup, backup.createdBy, "backup.failed", `Backup failed: ${fits.left.message}`, { error: fits.left.message })
                return
              }
              yield* repo.complete(backup.id, dump, new Date())
              yield* log(backup, backup.createdBy, "backup.completed", `Backup completed: ${dump.rows} rows, ${dump.archive.byteLength} bytes`, {
                rows: dump.rows,
                size: dump.archive.byteLength,
                sha256: dump.sha256
              })
            })
          )
          return
        }
        yield* report(`backup ${backup.id} failed`, exit.cause)
        const error = describe(exit.cause)
        yield* tx(
          Effect.gen(function* () {
            yield* repo.fail(backup.id, error, new Date())
            yield* log(backup, backup.createdBy, "backup.failed", `Backup failed: ${error}`, { error })
          })
        )
      }).pipe(Effect.catchAllCause((cause) => Effect.logError(`backup ${backup.id}: could not record its outcome`, cause)))

    const runRestore = (backup: Backup, actor: string) =>
      Effect.gen(function* () {
        yield* tx(
          Effect.gen(function* () {
            yield* repo.restoreRunning(backup.id)
            yield* log(backup, actor, "backup.restore_started", "Restore started")
          })
        )
        const exit = yield* Effect.exit(
          Effect.gen(function* () {
            const stored = yield* repo.archive(backup.id)
            if (Option.isNone(stored)) return yield* Effect.dieMessage(`backup ${backup.id} has no archive`)
            const rows = yield* archive.restore(backup.labId, stored.value.archive, stored.value.sha256)
            yield* repo.restoreDone(backup.id, rows, new Date())
            yield* log(backup, actor, "backup.restored", `Restored the lab from backup ${backup.id}: ${rows} rows`, { rows })
          }).pipe(sql.withTransaction)
        )
        if (exit._tag === "Success") return
        yield* report(`restore of ${backup.id} failed`, exit.cause)
        const error = describe(exit.cause)
        yield* tx(
          Effect.gen(function* () {
            yield* repo.restoreFailed(backup.id, error, new Date())
            yield* log(backup, actor, "backup.restore_failed", `Restore failed: ${error}`, { error })
          })
        )
      }).pipe(Effect.catchAllCause((cause) => Effect.logError(`restore of ${backup.id}: could not record its outcome`, cause)))

    /** Start a backup of the lab, or answer the one already in progress. */
    const create = (labId: string, actor: string) =>
      Effect.gen(function* () {
        const started = yield* tx(
          Effect.gen(function* () {
            yield* repo.lock(labId)
            const active = yield* repo.active(labId)
            yield* busy(active.filter((b) => inProgress(b.restore?.status)))
            const running = active.find((b) => inProgress(b.status))
            if (running) return { backup: running, created: false }
            yield* quotas.newBackup(labId)
            const backup: Backup = {
              id: newId("bkp"),
              labId,
              status: "pending",
              size: null,
              sha256: null,
              tables: {},
              rows: 0,
              error: null,
              createdBy: actor,
              createdAt: new Date(),
              startedAt: null,
              completedAt: null,
              restore: null
            }
            yield* repo.insert(backup)
            yield* log(backup, actor, "backup.created", "Backup requested")
            return { backup, created: true }
          })
        )
        if (started.created) yield* FiberSet.run(jobs, runBackup(started.backup))
        return started.backup
      })

    /** Start restoring the lab from a completed backup, or answer the restore already in progress. */
    const restore = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const started = yield* tx(
          Effect.gen(function* () {
            yield* repo.lock(labId)
            const backup = yield* Effect.flatMap(repo.find(labId, id), (b) => found(b, id))
            if (backup.status !== "completed") {
              return yield* new Conflict({ message: `backup ${id} is ${backup.status}: only a completed backup can be restored` })
            }
            if (backup.restore && inProgress(backup.restore.status)) return { backup, created: false }
            yield* busy((yield* repo.active(labId)).filter((b) => b.id !== id))
            yield* transition(`the restore of backup ${id}`, RESTORE_MACHINE, backup.restore?.status ?? "none", "pending")
            const updated = yield* Effect.flatMap(repo.requestRestore(id, actor, new Date()), (b) => found(b, id))
            yield* log(updated, actor, "backup.restore_requested", `Restore from backup ${id} requested`)
            return { backup: updated, created: true }
          })
        )
        if (started.created) yield* FiberSet.run(jobs, runRestore(started.backup, actor))
        return started.backup
      })

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), (b) => found(b, id))

    const remove = (labId: string, id: string, actor: string) =>
      tx(
        Effect.gen(function* () {
          yield* repo.lock(labId)
          const backup = yield* Effect.flatMap(repo.find(labId, id), (b) => found(b, id))
          if (inProgress(backup.status)) {
            return yield* new Conflict({ message: `backup ${id} is ${backup.status}: it can be deleted once it has ended` })
          }
          if (inProgress(backup.restore?.status)) {
            return yield* new Conflict({ message: `backup ${id} is being restored: it can be deleted once the restore has ended` })
          }
          yield* repo.remove(labId, id)
          yield* log(backup, actor, "backup.deleted", `Deleted backup ${id}`)
          return backup
        })
      )

    /** The archive of a completed backup, read in chunks as the client takes them. */
    const download = (labId: string, id: string) =>
      Effect.gen(function* () {
        const backup = yield* get(labId, id)
        if (backup.status !== "completed" || backup.size === null) {
          return yield* new Conflict({ message: `backup ${id} is ${backup.status}: only a completed backup has an archive` })
        }
        const size = backup.size
        const offsets = Array.from({ length: Math.ceil(size / DOWNLOAD_CHUNK) }, (_, i) => i * DOWNLOAD_CHUNK)
        const bytes = Stream.fromIterable(offsets).pipe(Stream.mapEffect((offset) => repo.chunk(id, offset, DOWNLOAD_CHUNK)))
        return { backup, size, bytes }
      })

    return {
      create,
      restore,
      get,
      remove,
      download,
      list: (labId: string, filter: BackupFilter, cursor: Option.Option<Cursor>, limit: number) => repo.list(labId, filter, cursor, limit)
    }
  })
}) {}
