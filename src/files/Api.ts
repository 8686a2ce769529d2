import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, QuotaExceededWire } from "../http/Errors.js"
import { PageParams } from "../db/Paging.js"
import { labGroup } from "../http/LabEndpoints.js"
import { BlobSha, DeletedFile, DirectoryPrefix, ExistingFilePath, File, FileSummary, WriteFile } from "./File.js"

/** Spec 4.3, plus a listing (GET without `path`) and optimistic concurrency (`sha`). */
export class FilesApi extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.get("read", "/files")
      .setUrlParams(
        Schema.Struct({
          labId: LabRef,
          path: Schema.optional(ExistingFilePath).annotations({ description: "the file to read; omit it to list files" }),
          prefix: Schema.optional(DirectoryPrefix).annotations({ description: "when listing: only files below this directory" }),
          ...PageParams
        })
      )
      .addSuccess(Envelope(File).annotations({ description: "with `path`: the file" }))
      .addSuccess(ListEnvelope(FileSummary).annotations({ description: "without `path`: files by path, paginated" }))
  )
  .add(
    HttpApiEndpoint.post("write", "/files")
      .setPayload(WriteFile)
      .addSuccess(Envelope(File).annotations({ description: "the file was overwritten" }))
      .addSuccess(Envelope(File).annotations({ description: "the file was created" }), { status: 201 })
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/files")
      .setPayload(WriteFile)
      .addSuccess(Envelope(File))
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
  )
  .add(
    HttpApiEndpoint.del("delete", "/files")
      .setUrlParams(Schema.Struct({ labId: LabRef, path: ExistingFilePath, sha: Schema.optional(BlobSha) }))
      .addSuccess(Envelope(DeletedFile))
      .addError(ConflictWire)
  )
  .pipe(labGroup) {}
