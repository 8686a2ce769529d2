import { Cause, Duration, Effect, Option, Schedule } from "effect"
import type { ActivityRepo } from "../activity/ActivityRepo.js"
import type { ResourceDeps } from "../activity/ResourceService.js"
import { transition } from "../common/StateMachine.js"
import { systemLab } from "../labs/LabId.js"
import type { Quotas } from "../quotas/Quotas.js"
import type { Archive, Dump } from "./Archive.js"
import { BACKUP_MACHINE, type Backup } from "./Backup.js"
import type { BackupsRepo } from "./BackupsRepo.js"
import { inBackground } from "../db/Priority.js"
import { inTransaction } from "../db/Transaction.js"
import type { Verified } from "./ArchiveRestore.js"
import { unmarkRestore } from "./RestoreApply.js"
import { clearChunks } from "./ArchiveStore.js"

/** The background half of backups: running a backup or a restore that was asked for, and recording how it ended. */

export interface JobDeps extends ResourceDeps<BackupsRepo> {
  readonly archive: Archive
  readonly quotas: Quotas
}

const tagged = (u: unknown, tag: string): u is { readonly _tag: string; readonly message: string; readonly cause?: unknown } =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === tag && "message" in u

/** A failure as the backup's error field says it: the archive's and the database's own words, anything else generically. */
const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Option.getOrUndefined(Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause)))
  if (tagged(error, "ArchiveError") || tagged(error, "OverQuota")) return error.message
  if (tagged(error, "SqlError")) {
    const reason = error.cause instanceof Error ? error.cause.message : error.message
    return `database error: ${reason}`
  }
  return "internal error; see the service log"
}

/** A refused archive or a quota is the user's business (a warning); anything else is ours (an error). */
const report = (message: string, cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  const failure = Option.getOrUndefined(Cause.failureOption(cause))
  return tagged(failure, "ArchiveError") || tagged(failure, "OverQuota")
    ? Effect.logWarning(`${message}: ${failure.message}`)
    : Effect.logError(message, cause)
}

/** In one transaction; a database failure is a defect. */
export const tx = inTransaction

/** An activity entry about the backup. */
export const log =
  (activity: ActivityRepo) =>
  (backup: Backup, actor: string, kind: string, message: string, data: Record<string, unknown> = {}) =>
    activity.record({ labId: backup.labId, kind, ref: backup.id, actor, message, data })

/** The dump is kept, unless the lab's stored bytes cannot take it (QUOTA_STORED_BYTES): then the backup failed. */
const keep = (deps: JobDeps, backup: Backup, dump: Dump) =>
  Effect.gen(function* () {
    const note = log(deps.activity)
    const fits = yield* Effect.either(deps.quotas.storedBytes(backup.labId, dump.size, "this backup's archive"))
    if (fits._tag === "Left") {
      yield* clearChunks(deps.sql, backup.id)
      yield* deps.repo.fail(backup.id, fits.left.message, new Date())
      yield* note(backup, backup.createdBy, "backup.failed", `Backup failed: ${fits.left.message}`, { error: fits.left.message })
      return
    }
    yield* deps.repo.complete(backup.id, dump, new Date())
    yield* note(backup, backup.createdBy, "backup.completed", `Backup completed: ${dump.rows} rows, ${dump.size} bytes`, {
      rows: dump.rows,
      size: dump.size,
      sha256: dump.sha256
    })
  })

/** Run a pending backup to its end, recording how it went. */
export const runBackup = (deps: JobDeps, backup: Backup) =>
  Effect.gen(function* () {
    const inTx = tx(deps.sql)
    const note = log(deps.activity)
    yield* inTx(
      Effect.gen(function* () {
        yield* transition(`backup ${backup.id}`, BACKUP_MACHINE, backup.status, "running")
        yield* deps.repo.markRunning(backup.id, new Date())
        yield* note(backup, backup.createdBy, "backup.started", "Backup started")
      })
    )
    const exit = yield* Effect.exit(deps.archive.dump(backup.id, systemLab(backup.labId)))
    if (exit._tag === "Success") return yield* inTx(keep(deps, backup, exit.value))
    yield* report(`backup ${backup.id} failed`, exit.cause)
    const error = describe(exit.cause)
    yield* inTx(
      Effect.gen(function* () {
        yield* deps.repo.fail(backup.id, error, new Date())
        yield* note(backup, backup.createdBy, "backup.failed", `Backup failed: ${error}`, { error })
      })
    )
  }).pipe(Effect.catchAllCause((cause) => Effect.logError(`backup ${backup.id}: could not record its outcome`, cause)))

/**
 * The stored-bytes quota of a restore: what the backup's files add to the lab's (files the archive holds against
 * the lab's now), in the restore's first transaction, before it changes anything.
 */
const restoreFits = (deps: JobDeps, backup: Backup, readFileBytes: number) =>
  Effect.gen(function* () {
    const noted = yield* deps.repo.fileBytes(backup.id)
    yield* deps.quotas.restoredFiles(backup.labId, Option.getOrElse(noted, () => readFileBytes))
  })

/** Times the apply is run from the start before the restore is given up (a lost connection, a deadlock…). */
const APPLY_ATTEMPTS = 3
const APPLY_RETRY = Duration.seconds(1)

/** The failure and its activity entry of a restore, in one transaction (after `first`, when given). */
const recordFailure = (deps: JobDeps, backup: Backup, actor: string, error: string, first: Effect.Effect<unknown> = Effect.void) =>
  tx(deps.sql)(
    Effect.gen(function* () {
      yield* first
      yield* deps.repo.restoreFailed(backup.id, error, new Date())
      yield* log(deps.activity)(backup, actor, "backup.restore_failed", `Restore failed: ${error}`, { error })
    })
  )

/**
 * Apply a marked restore from the start to its end (RestoreApply.ts), again after a failure up to APPLY_ATTEMPTS
 * times, then in one short transaction remove the mark and record the outcome. Given up, the lab is left partly
 * restored but open to writes, and the restore failed saying so (restoring again puts the lab back whole). Used by
 * runRestore and to finish a restore whose runner stopped (Backups.ts).
 */
export const finishRestore = (deps: JobDeps, backup: Backup, actor: string, verified: Verified) =>
  Effect.gen(function* () {
    const labId = systemLab(backup.labId)
    const sha256 = backup.sha256
    const apply = sha256 === null ? Effect.dieMessage(`backup ${backup.id} has no archive`) : deps.archive.apply(labId, verified, sha256)
    const exit = yield* Effect.exit(Effect.retry(apply, { times: APPLY_ATTEMPTS - 1, schedule: Schedule.spaced(APPLY_RETRY) }))
    if (exit._tag === "Success") {
      const rows = exit.value
      yield* tx(deps.sql)(
        Effect.gen(function* () {
          yield* Effect.orDie(unmarkRestore(deps.sql, labId, backup.id))
          yield* deps.repo.restoreDone(backup.id, rows, new Date())
          yield* log(deps.activity)(backup, actor, "backup.restored", `Restored the lab from backup ${backup.id}: ${rows} rows`, { rows })
        })
      )
    } else {
      yield* report(`restore of ${backup.id} failed after its mark`, exit.cause)
      const error = `${describe(exit.cause)}; the lab is partly restored: restore it again to put it back whole`
      yield* recordFailure(deps, backup, actor, error, Effect.orDie(unmarkRestore(deps.sql, labId, backup.id)))
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logError(`restore of ${backup.id}: could not record its outcome`, cause)))

/**
 * Run a pending restore of the backup's lab to its end, recording how it went: its archive read through in short
 * steps, checked whole and its rows against the schema; then, in one short transaction, the quotas checked and the
 * lab marked (its writes refused meanwhile); then the lab put back in short steps (finishRestore).
 */
export const runRestore = (deps: JobDeps, backup: Backup, actor: string) =>
  Effect.gen(function* () {
    const inTx = tx(deps.sql)
    const note = log(deps.activity)
    yield* inTx(
      Effect.gen(function* () {
        yield* deps.repo.restoreRunning(backup.id)
        yield* note(backup, actor, "backup.restore_started", "Restore started")
      })
    )
    const labId = systemLab(backup.labId)
    const marked = yield* Effect.exit(
      Effect.gen(function* () {
        if (backup.sha256 === null) return yield* Effect.dieMessage(`backup ${backup.id} has no archive`)
        const checked = yield* deps.archive.check(backup.id, labId, backup.sha256)
        yield* Effect.gen(function* () {
          yield* restoreFits(deps, backup, checked.fileBytes)
          yield* deps.archive.mark(labId, checked.verified)
          yield* note(backup, actor, "backup.restore_applying", "Restore applying: the lab's writes are refused until it has ended")
        }).pipe(deps.sql.withTransaction, inBackground)
        return checked.verified
      })
    )
    if (marked._tag === "Success") return yield* finishRestore(deps, backup, actor, marked.value)
    yield* report(`restore of ${backup.id} failed`, marked.cause)
    yield* recordFailure(deps, backup, actor, describe(marked.cause))
  }).pipe(Effect.catchAllCause((cause) => Effect.logError(`restore of ${backup.id}: could not record its outcome`, cause)))
