import { Schema } from "effect"
import { Body, DateRange, LabRef, resourceId, Timestamp } from "../common/Schemas.js"
import type { Transitions } from "../common/StateMachine.js"
import { PageParams } from "../db/Paging.js"

export const BackupStatus = Schema.Literal("pending", "running", "completed", "failed")
export type BackupStatus = typeof BackupStatus.Type

/** pending → running → completed | failed (and pending → failed when the service stops first). */
export const BACKUP_MACHINE: Transitions<BackupStatus> = {
  pending: ["running", "failed"],
  running: ["completed", "failed"],
  completed: [],
  failed: []
}

export const RestoreStatus = Schema.Literal("pending", "running", "completed", "failed")
export type RestoreStatus = typeof RestoreStatus.Type

/** A restore can be asked for again once the previous one ended. */
export const RESTORE_MACHINE: Transitions<RestoreStatus | "none"> = {
  none: ["pending"],
  pending: ["running", "failed"],
  running: ["completed", "failed"],
  completed: ["pending"],
  failed: ["pending"]
}

export const Restore = Schema.Struct({
  status: RestoreStatus,
  requestedBy: Schema.String,
  requestedAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  rows: Schema.NullOr(Schema.Number).annotations({ description: "rows put back, once completed" }),
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BackupRestore", description: "the latest restore of this backup into its lab" })
export type Restore = typeof Restore.Type

export const BackupId = resourceId("BackupId", "bkp")
export type BackupId = typeof BackupId.Type

export const Backup = Schema.Struct({
  id: BackupId,
  labId: Schema.String,
  status: BackupStatus,
  size: Schema.NullOr(Schema.Number).annotations({ description: "bytes of the gzip archive, once completed" }),
  sha256: Schema.NullOr(Schema.String).annotations({ description: "SHA-256 of the archive (hex), once completed" }),
  tables: Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({
    description: "rows archived per table, once completed"
  }),
  rows: Schema.Number.annotations({ description: "rows archived in all" }),
  error: Schema.NullOr(Schema.String).annotations({ description: "why it failed" }),
  createdBy: Schema.String,
  createdAt: Timestamp,
  startedAt: Schema.NullOr(Timestamp),
  completedAt: Schema.NullOr(Timestamp),
  restore: Schema.NullOr(Restore)
}).annotations({ identifier: "Backup" })
export type Backup = typeof Backup.Type

export const CreateBackup = Body({ labId: LabRef })
export const RestoreBackup = Body({ labId: LabRef })

export const BackupQuery = Schema.Struct({ labId: LabRef, status: Schema.optional(BackupStatus), ...DateRange, ...PageParams })
