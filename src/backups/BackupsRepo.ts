import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import type { Cursor } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { type Backup, BackupId, BackupStatus, RestoreStatus } from "./Backup.js"
import type { Dump } from "./Archive.js"

/** Every column but the archive's (unused since migration 13, which moved archives to backup_chunks) and file_bytes. */
const COLUMNS = `id, lab_id, status, size, sha256, tables, rows, error, created_by, created_at, started_at, completed_at,
  restore_status, restore_requested_by, restore_requested_at, restore_completed_at, restore_rows, restore_error`

const Row = Schema.Struct({
  id: BackupId,
  labId: Schema.String,
  status: BackupStatus,
  size: Schema.NullOr(Schema.Number),
  sha256: Schema.NullOr(Schema.String),
  tables: Schema.Record({ key: Schema.String, value: Schema.Number }),
  rows: Schema.Number,
  error: Schema.NullOr(Schema.String),
  createdBy: Schema.String,
  createdAt: Schema.DateFromSelf,
  startedAt: Schema.NullOr(Schema.DateFromSelf),
  completedAt: Schema.NullOr(Schema.DateFromSelf),
  restoreStatus: Schema.NullOr(RestoreStatus),
  restoreRequestedBy: Schema.NullOr(Schema.String),
  restoreRequestedAt: Schema.NullOr(Schema.DateFromSelf),
  restoreCompletedAt: Schema.NullOr(Schema.DateFromSelf),
  restoreRows: Schema.NullOr(Schema.Number),
  restoreError: Schema.NullOr(Schema.String)
})
type Row = typeof Row.Type

const toBackup = (row: Row): Backup => ({
  id: row.id,
  labId: row.labId,
  status: row.status,
  size: row.size,
  sha256: row.sha256,
  tables: row.tables,
  rows: row.rows,
  error: row.error,
  createdBy: row.createdBy,
  createdAt: row.createdAt,
  startedAt: row.startedAt,
  completedAt: row.completedAt,
  restore:
    row.restoreStatus === null
      ? null
      : {
          status: row.restoreStatus,
          requestedBy: row.restoreRequestedBy ?? "",
          requestedAt: row.restoreRequestedAt ?? row.createdAt,
          completedAt: row.restoreCompletedAt,
          rows: row.restoreRows,
          error: row.restoreError
        }
})

const decodeRowArray = Schema.decodeUnknown(Schema.Array(Row))

const decodeRows = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodeRowArray(rows), (decoded) => decoded.map(toBackup))

export interface BackupFilter {
  readonly status: Option.Option<BackupStatus>
  readonly from: Option.Option<Date>
  readonly to: Option.Option<Date>
}

const FileBytes = Schema.Array(Schema.Struct({ fileBytes: Schema.NullOr(Schema.NumberFromString) }))
const decodeFileBytes = Schema.decodeUnknown(FileBytes)

const one = (rows: ReadonlyArray<unknown>) => Effect.map(decodeRows(rows), (b) => Option.fromNullable(b[0]))

const list = (sql: SqlClient.SqlClient, labId: LabId, filter: BackupFilter, cursor: Option.Option<Cursor>, limit: number) =>
  Effect.flatMap(
    sql`SELECT ${sql.literal(COLUMNS)} FROM backups
        WHERE ${sql.and([
          sql`lab_id = ${labId}`,
          ...Option.toArray(Option.map(filter.status, (s) => sql`status = ${s}`)),
          ...Option.toArray(Option.map(filter.from, (d) => sql`created_at >= ${d.toISOString()}::timestamptz`)),
          ...Option.toArray(Option.map(filter.to, (d) => sql`created_at < ${d.toISOString()}::timestamptz`)),
          Option.match(cursor, {
            onNone: () => sql`TRUE`,
            onSome: (c) => sql`(created_at, id) < (${c.createdAt.toISOString()}::timestamptz, ${c.id})`
          })
        ])}
        ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`,
    decodeRows
  )

/**
 * At start: work a stopped process left behind cannot finish any more, and what it had stored on the way (rows a
 * restore staged before restores read their archive from its chunks). A restore that had marked its lab is not such
 * work: it is finished (rolled forward, Backups.ts) from its backup's chunks.
 */
const failInterrupted = (sql: SqlClient.SqlClient, at: Date) =>
  Effect.all([
    sql`UPDATE backups SET status = 'failed', error = 'interrupted: the service stopped before the backup finished',
          completed_at = ${at.toISOString()}::timestamptz
        WHERE status IN ('pending', 'running')`,
    sql`UPDATE backups SET restore_status = 'failed', restore_error = 'interrupted: the service stopped before the restore finished',
          restore_completed_at = ${at.toISOString()}::timestamptz
        WHERE restore_status IN ('pending', 'running') AND NOT EXISTS (SELECT 1 FROM lab_restores m WHERE m.backup_id = backups.id)`,
    sql`DELETE FROM backup_chunks WHERE backup_id IN (SELECT id FROM backups WHERE status = 'failed')`,
    sql`DELETE FROM restore_rows WHERE backup_id IN (
          SELECT id FROM backups WHERE restore_status IS NULL OR restore_status NOT IN ('pending', 'running'))`
  ])

const Claimed = Schema.Array(Schema.Struct({ labId: Schema.String, backupId: BackupId, staged: Schema.String }))

/**
 * Take over the marks of restores whose runner has not shown it was alive for `staleSeconds` (it stopped): their
 * heartbeat is written now, so no other replica takes them too. What each needs to be finished.
 */
const claimStale = (sql: SqlClient.SqlClient, staleSeconds: number) =>
  Effect.flatMap(
    sql`UPDATE lab_restores SET heartbeat_at = now()
        WHERE heartbeat_at < now() - make_interval(secs => ${staleSeconds})
        RETURNING lab_id, backup_id, staged::text AS staged`,
    Schema.decodeUnknown(Claimed)
  )

/** The bytes of the lab's files a backup holds; none for a backup from before they were noted (migration 13). */
const fileBytes = (sql: SqlClient.SqlClient, id: BackupId) =>
  Effect.flatMap(sql`SELECT file_bytes::text AS file_bytes FROM backups WHERE id = ${id}`, (rows) =>
    Effect.map(decodeFileBytes(rows), (r) => Option.fromNullable(r[0]?.fileBytes))
  )

/** The status changes of a backup and its restore; each answers the backup as it is then. */
const statusChanges = (update: (id: BackupId, fields: Record<string, unknown>) => Effect.Effect<Option.Option<Backup>>) => ({
  markRunning: (id: BackupId, at: Date) => update(id, { status: "running", startedAt: at }),
  complete: (id: BackupId, dump: Dump, at: Date) =>
    update(id, {
      status: "completed",
      size: dump.size,
      sha256: dump.sha256,
      fileBytes: dump.fileBytes,
      tables: JSON.stringify(dump.tables),
      rows: dump.rows,
      completedAt: at
    }),
  fail: (id: BackupId, error: string, at: Date) => update(id, { status: "failed", error, completedAt: at }),
  requestRestore: (id: BackupId, by: string, at: Date) =>
    update(id, {
      restoreStatus: "pending",
      restoreRequestedBy: by,
      restoreRequestedAt: at,
      restoreCompletedAt: null,
      restoreRows: null,
      restoreError: null
    }),
  restoreRunning: (id: BackupId) => update(id, { restoreStatus: "running" }),
  restoreDone: (id: BackupId, rows: number, at: Date) => update(id, { restoreStatus: "completed", restoreRows: rows, restoreCompletedAt: at }),
  restoreFailed: (id: BackupId, error: string, at: Date) =>
    update(id, { restoreStatus: "failed", restoreError: error, restoreCompletedAt: at })
})

/**
 * Backups are lab resources, but not on `makeLabTable`: every query here names its columns (the archive itself is in
 * backup_chunks, ArchiveStore.ts).
 */
export class BackupsRepo extends Effect.Service<BackupsRepo>()("BackupsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = (backup: Backup) =>
      sql`INSERT INTO backups (id, lab_id, status, tables, rows, created_by, created_at)
          VALUES (${backup.id}, ${backup.labId}, ${backup.status}, ${JSON.stringify(backup.tables)}, ${backup.rows},
                  ${backup.createdBy}, ${backup.createdAt.toISOString()}::timestamptz)`

    const update = (id: BackupId, fields: Record<string, unknown>) =>
      Effect.orDie(Effect.flatMap(sql`UPDATE backups SET ${sql.update(fields)} WHERE id = ${id} RETURNING ${sql.literal(COLUMNS)}`, one))

    return {
      /** Serialises the backup and restore decisions of one lab (held until the transaction ends). */
      lock: (labId: LabId) => Effect.orDie(sql`SELECT pg_advisory_xact_lock(hashtext(${`backups:${labId}`}))`),
      insert: (backup: Backup) => Effect.orDie(insert(backup)),
      find: (labId: LabId, id: BackupId) =>
        Effect.orDie(Effect.flatMap(sql`SELECT ${sql.literal(COLUMNS)} FROM backups WHERE lab_id = ${labId} AND id = ${id}`, one)),
      list: (labId: LabId, filter: BackupFilter, cursor: Option.Option<Cursor>, limit: number) =>
        Effect.orDie(list(sql, labId, filter, cursor, limit)),
      /** The lab's backups with a backup or a restore in progress. */
      active: (labId: LabId) =>
        Effect.orDie(
          Effect.flatMap(
            sql`SELECT ${sql.literal(COLUMNS)} FROM backups WHERE lab_id = ${labId}
                AND (status IN ('pending', 'running') OR restore_status IN ('pending', 'running'))`,
            decodeRows
          )
        ),
      ...statusChanges(update),
      fileBytes: (id: BackupId) => Effect.orDie(fileBytes(sql, id)),
      remove: (labId: LabId, id: BackupId) => Effect.orDie(sql`DELETE FROM backups WHERE lab_id = ${labId} AND id = ${id}`),
      failInterrupted: (at: Date) => Effect.orDie(failInterrupted(sql, at)),
      claimStaleRestores: (staleSeconds: number) => Effect.orDie(claimStale(sql, staleSeconds))
    }
  })
}) {}
