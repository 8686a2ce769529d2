import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, QuotaExceededWire } from "../http/Errors.js"
import { LabQuery, labGroup } from "../http/LabEndpoints.js"
import { Backup, BackupId, BackupQuery, CreateBackup, RestoreBackup } from "./Backup.js"

const ById = Schema.Struct({ id: BackupId })

export class BackupsApi extends HttpApiGroup.make("backups")
  .add(
    HttpApiEndpoint.get("list", "/backups")
      .setUrlParams(BackupQuery)
      .addSuccess(ListEnvelope(Backup))
      .annotateContext(
        OpenApi.annotations({
          summary: "List backups",
          description:
            "The lab's backups, newest first, filtered by `status` and creation time, each with its status, size, checksum and latest restore."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/backups")
      .setPayload(CreateBackup)
      .addSuccess(Envelope(Backup).annotations({ description: "the backup, pending (or the one already in progress)" }), { status: 202 })
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Back up the lab",
          description:
            "Starts a backup of the lab's files and every resource into an archive; 202 with it `pending` (or the backup already in progress: safe to repeat). Poll GET /api/v1/backups/{id} until `completed` or `failed`. 409 while a restore runs; 403 `quota_exceeded` past the plan's backups kept or stored bytes."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/backups/:id")
      .setPath(ById)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Backup).annotations({ description: "extension: one backup (poll it for its status)" }))
      .annotateContext(
        OpenApi.annotations({
          summary: "Get a backup",
          description:
            "Extension. One backup by id, with its status and its latest restore: poll it after starting a backup or a restore."
        })
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/backups/:id")
      .setPath(ById)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Backup).annotations({ description: "extension: the deleted backup" }))
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Delete a backup",
          description:
            "Extension. Deletes the backup and its archive; 409 while it or its restore is in progress."
        })
      )
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Restore a backup",
          description:
            "Extension. Puts the lab back as the completed backup archived it, replacing its current rows; 202 with the restore `pending` (or the one in progress). The lab's writes get 409 while it applies. 409 for a backup not completed or while another backup or restore of the lab runs; 403 `quota_exceeded` when the restored lab would exceed its quota."
        })
      )
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Download a backup's archive",
          description:
            "Extension. The completed backup's archive, gzip'd NDJSON, streamed (409 before it is completed). Needs a read-write key: the archive holds the lab's sealed secrets."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Backups of a lab into archives kept by the service: create, list, download, restore, delete."
  ) {}
