import { Duration, Effect, FiberSet, Option, Schedule, Stream } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import type { Cursor } from "../db/Paging.js"
import { DatabaseKind } from "../db/DatabaseKind.js"
import { type LabId, systemLab } from "../labs/LabId.js"
import { Quotas } from "../quotas/Quotas.js"
import { Archive } from "./Archive.js"
import { type Backup, BackupId, RESTORE_MACHINE } from "./Backup.js"
import { readChunks } from "./ArchiveStore.js"
import { finishRestore, type JobDeps, log, runBackup, runRestore, tx } from "./BackupJobs.js"
import { decodeStaged } from "./RestoreCheck.js"
import { type BackupFilter, BackupsRepo } from "./BackupsRepo.js"

const RESOURCE = "backup"

/** How long a restore's mark goes without a heartbeat before another runner finishes it, and how often to look. */
const STALE_SECONDS = 60
const ROLL_FORWARD_EVERY = Duration.seconds(30)

const inProgress = (status: string | undefined) => status === "pending" || status === "running"

const conflict = (id: BackupId, problem: string) => new StateConflict({ resource: RESOURCE, id, problem })

const found = (deps: JobDeps, labId: LabId, id: BackupId) => orNotFound(RESOURCE, id)(deps.repo.find(labId, id))

/** Someone else's backup or restore in progress in the lab: 409 naming it. */
const busy = (others: ReadonlyArray<Backup>) => {
  const other = others[0]
  if (other === undefined) return Effect.void
  return Effect.fail(
    conflict(
      other.id,
      inProgress(other.restore?.status)
        ? `a restore of backup ${other.id} is in progress in this lab; retry when it has ended`
        : `backup ${other.id} is ${other.status} in this lab; retry when it has ended`
    )
  )
}

/** A new backup of the lab, or the one already in progress (in the caller's transaction). */
const startBackup = (deps: JobDeps, labId: LabId, actor: string) =>
  Effect.gen(function* () {
    yield* deps.repo.lock(labId)
    const active = yield* deps.repo.active(labId)
    yield* busy(active.filter((b) => inProgress(b.restore?.status)))
    const running = active.find((b) => inProgress(b.status))
    if (running) return { backup: running, created: false }
    yield* deps.quotas.newBackup(labId)
    const backup: Backup = {
      id: BackupId.make(newId("bkp")),
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
    yield* deps.repo.insert(backup)
    yield* log(deps.activity)(backup, actor, "backup.created", "Backup requested")
    return { backup, created: true }
  })

/** A restore of the lab from a completed backup, or the one already in progress (in the caller's transaction). */
const startRestore = (deps: JobDeps, labId: LabId, id: BackupId, actor: string) =>
  Effect.gen(function* () {
    yield* deps.repo.lock(labId)
    const backup = yield* found(deps, labId, id)
    if (backup.status !== "completed") {
      return yield* conflict(id, `backup ${id} is ${backup.status}: only a completed backup can be restored`)
    }
    if (backup.restore && inProgress(backup.restore.status)) return { backup, created: false }
    yield* busy((yield* deps.repo.active(labId)).filter((b) => b.id !== id))
    yield* transition(`the restore of backup ${id}`, RESTORE_MACHINE, backup.restore?.status ?? "none", "pending")
    // the stored-bytes quota, when the backup noted its files' bytes (the job checks again, and for older backups)
    const fileBytes = yield* deps.repo.fileBytes(id)
    if (Option.isSome(fileBytes)) yield* deps.quotas.restoredFiles(labId, fileBytes.value)
    const updated = yield* orNotFound(RESOURCE, id)(deps.repo.requestRestore(id, actor, new Date()))
    yield* log(deps.activity)(updated, actor, "backup.restore_requested", `Restore from backup ${id} requested`)
    return { backup: updated, created: true }
  })

/** Delete a backup that is not in progress nor being restored (in the caller's transaction). */
const remove = (deps: JobDeps, labId: LabId, id: BackupId, actor: string) =>
  Effect.gen(function* () {
    yield* deps.repo.lock(labId)
    const backup = yield* found(deps, labId, id)
    if (inProgress(backup.status)) {
      return yield* conflict(id, `backup ${id} is ${backup.status}: it can be deleted once it has ended`)
    }
    if (inProgress(backup.restore?.status)) {
      return yield* conflict(id, `backup ${id} is being restored: it can be deleted once the restore has ended`)
    }
    yield* deps.repo.remove(labId, id)
    yield* log(deps.activity)(backup, actor, "backup.deleted", `Deleted backup ${id}`)
    return backup
  })

/** The archive of a completed backup, read a chunk at a time as the client takes them (ArchiveStore.ts). */
const download = (deps: JobDeps, labId: LabId, id: BackupId) =>
  Effect.gen(function* () {
    const backup = yield* found(deps, labId, id)
    if (backup.status !== "completed" || backup.size === null) {
      return yield* conflict(id, `backup ${id} is ${backup.status}: only a completed backup has an archive`)
    }
    return { backup, size: backup.size, bytes: Stream.orDie(readChunks(deps.sql, id)) }
  })

/**
 * Lab snapshots. A backup or a restore is asked for (202, pending), then runs
 * in the background on this instance (BackupJobs.ts); its status says how far it got. One
 * backup or restore runs per lab at a time: asking again for the one running
 * answers it again, anything else waits for it to end (409).
 */
export class Backups extends Effect.Service<Backups>()("Backups", {
  dependencies: [BackupsRepo.Default, Archive.Default, ActivityRepo.Default, Quotas.Default],
  scoped: Effect.gen(function* () {
    const deps: JobDeps = yield* Effect.all({ ...resourceDeps(BackupsRepo), archive: Archive, quotas: Quotas })
    const inTx = tx(deps.sql)
    const jobs = yield* FiberSet.make()
    const kind = yield* DatabaseKind

    // a backup or restore of a process that stopped will never finish: say so
    yield* deps.repo.failInterrupted(new Date())

    // a restore that had marked its lab when its runner stopped is finished here: on embedded PGlite this process is
    // the only one, so at start every mark is orphaned; on PostgreSQL, only a mark whose heartbeat went stale
    const running = new Set<string>()
    /** Run a restore job in the background, known as running here (so no look for stale marks takes it) until it ends. */
    const runTracked = <A, E, R>(backupId: string, job: Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        Effect.sync(() => running.add(backupId)),
        FiberSet.run(jobs, Effect.ensuring(job, Effect.sync(() => running.delete(backupId))))
      )
    const rollForward = (staleSeconds: number) =>
      Effect.gen(function* () {
        for (const claimed of yield* deps.repo.claimStaleRestores(staleSeconds)) {
          if (running.has(claimed.backupId)) continue
          const backup = yield* deps.repo.find(systemLab(claimed.labId), claimed.backupId)
          const staged = yield* Effect.option(decodeStaged(claimed.backupId, claimed.staged))
          if (Option.isNone(backup) || Option.isNone(staged)) {
            yield* Effect.logError(`restore of ${claimed.backupId}: its mark on lab ${claimed.labId} cannot be finished`)
            continue
          }
          yield* Effect.logWarning(`restore of ${claimed.backupId}: its runner stopped after marking the lab; finishing it`)
          yield* runTracked(claimed.backupId, finishRestore(deps, backup.value, backup.value.restore?.requestedBy ?? "system", staged.value))
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logError("restores left marked could not be looked for", cause)))
    yield* rollForward(kind === "pglite" ? 0 : STALE_SECONDS)
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(rollForward(STALE_SECONDS), ROLL_FORWARD_EVERY), Schedule.forever))

    return {
      /** Start a backup of the lab, or answer the one already in progress. */
      create: (labId: LabId, actor: string) =>
        Effect.gen(function* () {
          const started = yield* inTx(startBackup(deps, labId, actor))
          if (started.created) yield* FiberSet.run(jobs, runBackup(deps, started.backup))
          return started.backup
        }),
      /** Start restoring the lab from a completed backup, or answer the restore already in progress. */
      restore: (labId: LabId, id: BackupId, actor: string) =>
        Effect.gen(function* () {
          const started = yield* inTx(startRestore(deps, labId, id, actor))
          if (started.created) yield* runTracked(started.backup.id, runRestore(deps, started.backup, actor))
          return started.backup
        }),
      get: (labId: LabId, id: BackupId) => found(deps, labId, id),
      remove: (labId: LabId, id: BackupId, actor: string) => inTx(remove(deps, labId, id, actor)),
      download: (labId: LabId, id: BackupId) => download(deps, labId, id),
      list: (labId: LabId, filter: BackupFilter, cursor: Option.Option<Cursor>, limit: number) =>
        deps.repo.list(labId, filter, cursor, limit)
    }
  })
}) {}
