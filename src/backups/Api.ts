import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, QuotaExceededWire } from "../http/Errors.js"
import { LabQuery, labGroup } from "../http/LabEndpoints.js"
import { Backup, BackupId, BackupQuery, CreateBackup, RestoreBackup } from "./Backup.js"

const ById = Schema.Struct({ id: BackupId })

export class BackupsApi extends HttpApiGroup.make("backups")
  .add(HttpApiEndpoint.get("list", "/backups").setUrlParams(BackupQuery).addSuccess(ListEnvelope(Backup)))
  .add(
    HttpApiEndpoint.post("create", "/backups")
      .setPayload(CreateBackup)
      .addSuccess(Envelope(Backup).annotations({ description: "the backup, pending (or the one already in progress)" }), { status: 202 })
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
  )
  .add(
    HttpApiEndpoint.get("get", "/backups/:id")
      .setPath(ById)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Backup).annotations({ description: "extension: one backup (poll it for its status)" }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/backups/:id")
      .setPath(ById)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Backup).annotations({ description: "extension: the deleted backup" }))
      .addError(ConflictWire)
  )
  .add(
    HttpApiEndpoint.post("restore", "/backups/:id/restore")
      .setPath(ById)
      .setPayload(RestoreBackup)
      .addSuccess(Envelope(Backup).annotations({ description: "extension: the backup, its restore pending (or in progress)" }), {
        status: 202
      })
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
  )
  .add(
    HttpApiEndpoint.get("download", "/backups/:id/download")
      .setPath(ById)
      .setUrlParams(LabQuery)
      .addSuccess(
        HttpApiSchema.Uint8Array({ contentType: "application/gzip" }).annotations({
          description: "extension: the archive, gzip'd NDJSON (see docs/backups.md)"
        })
      )
      .addError(ConflictWire)
  )
  .pipe(labGroup) {}
