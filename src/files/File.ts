import { Either, ParseResult, Schema } from "effect"
import { Body, LabRef, Timestamp } from "../common/Schemas.js"
import { cursorFromString } from "../db/Paging.js"
import { byteLength } from "./BlobId.js"
import { normalizePath, normalizePathShape, normalizePrefix } from "./Paths.js"

/** At most 1 MiB (1,048,576 bytes) per file, written through the API or pulled by a sync. */
export const MAX_FILE_BYTES = 1_048_576

const normalized = (normalize: (raw: string) => Either.Either<string, string>, description: string) =>
  Schema.transformOrFail(Schema.String, Schema.String, {
    strict: true,
    decode: (raw, _, ast) =>
      Either.match(normalize(raw), {
        onLeft: (reason) => ParseResult.fail(new ParseResult.Type(ast, raw, reason)),
        onRight: ParseResult.succeed
      }),
    encode: ParseResult.succeed
  }).annotations({ description })

/** A file path: starts with `/`, normalised; see Paths.ts for what is refused (git's own rule included). */
export const FilePath = normalized(normalizePath, "a file path such as /notes/idea.md (normalised; at most 1,024 characters)")

/**
 * A path to read or delete: FilePath without git's rule, so a file stored under a path git refuses
 * (written before the files API refused such paths) can still be read and removed.
 */
export const ExistingFilePath = normalized(
  normalizePathShape,
  "a file path such as /notes/idea.md (normalised; at most 1,024 characters)"
)

export const DirectoryPrefix = normalized(normalizePrefix, "a directory such as /notes (lists everything below it)")

/** A directory of the repository, with or without its slashes: `notes`, `/notes` and `notes/` alike. */
export const RepoDirectory = normalized(
  (raw) => normalizePrefix(raw.startsWith("/") ? raw : `/${raw}`),
  "a directory such as notes or /notes (everything below it)"
)

export const FileContent = Schema.String.pipe(
  Schema.filter((s) => byteLength(s) <= MAX_FILE_BYTES || `must be at most ${MAX_FILE_BYTES} bytes of UTF-8`),
  Schema.filter((s) => !s.includes("\0") || "must be text: NUL characters are not allowed")
).annotations({ description: `text, at most ${MAX_FILE_BYTES} bytes in UTF-8` })

export const BlobSha = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{40}$/, { message: () => "must be a 40-character git blob id" })
).annotations({ description: "git blob id (sha1) of the content" })

export const FileSource = Schema.Literal("git", "api")

export const FileSummary = Schema.Struct({
  labId: Schema.String,
  path: Schema.String,
  size: Schema.Number.annotations({ description: "bytes of UTF-8" }),
  sha: Schema.String.annotations({ description: "git blob id of the content" }),
  source: FileSource.annotations({ description: "who wrote the current content: a git sync or the API" }),
  fromGit: Schema.Boolean.annotations({
    description: "first pulled from the repository; only such files are ever deleted by a sync"
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "FileSummary" })
export type FileSummary = typeof FileSummary.Type

export const File = Schema.Struct({ ...FileSummary.fields, content: Schema.String }).annotations({ identifier: "File" })
export type File = typeof File.Type

export const WriteFile = Body({
  labId: LabRef,
  path: FilePath,
  content: FileContent,
  sha: Schema.optional(BlobSha).annotations({
    description: "optimistic concurrency: the blob id the file has now; 409 if it changed since"
  })
})
export type WriteFile = typeof WriteFile.Type

/** Files are listed by path; a list's cursor is the last path seen. */
export const PathCursor = cursorFromString(Schema.Struct({ path: Schema.String }))

/** The answer to a delete. */
export const DeletedFile = Schema.Struct({ labId: Schema.String, path: Schema.String, sha: Schema.String, deleted: Schema.Literal(true) }).annotations({
  identifier: "DeletedFile"
})
