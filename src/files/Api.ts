import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a file, or list files",
          description:
            "With `path`: the file's content, size and `sha` (its git blob id; 404 when missing). Without `path`: the lab's files in path order, without content, optionally below a `prefix` directory, paginated. Keep the `sha` to write or delete safely later."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("write", "/files")
      .setPayload(WriteFile)
      .addSuccess(Envelope(File).annotations({ description: "the file was overwritten" }))
      .addSuccess(Envelope(File).annotations({ description: "the file was created" }), { status: 201 })
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Write a file",
          description:
            "Creates the file (201) or overwrites it (200). With `sha`, only if the file is still at that blob id (409 otherwise: optimistic concurrency). With auto-push on, the write is also committed to the linked repository. Use PATCH instead to refuse creating a file that does not exist."
        })
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/files")
      .setPayload(WriteFile)
      .addSuccess(Envelope(File))
      .addError(ConflictWire)
      .addError(QuotaExceededWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Update a file",
          description:
            "Overwrites an existing file only: 404 when it does not exist. `sha` and auto-push as for POST."
        })
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/files")
      .setUrlParams(Schema.Struct({ labId: LabRef, path: ExistingFilePath, sha: Schema.optional(BlobSha) }))
      .addSuccess(Envelope(DeletedFile))
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Delete a file",
          description:
            "Deletes the file at `path`; with `sha`, only if it is still at that blob id (409 otherwise). With auto-push on, the deletion is also committed to the linked repository."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "The lab's text files (spec 4.3): read, list, write, update and delete by path, with optimistic concurrency on the git blob id. With auto-push on, writes and deletes are committed to the linked repository."
  ) {}
