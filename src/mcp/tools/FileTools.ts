import { Effect, Either, Option, Schema } from "effect"
import { InvalidField } from "../../common/DomainErrors.js"
import { pageQueryWith } from "../../db/Paging.js"
import { DeletedFile, DirectoryPrefix, ExistingFilePath, File, FileSummary, PathCursor, WriteFile } from "../../files/File.js"
import { Files } from "../../files/Files.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"

const decodePathCursor = Schema.decodeUnknownEither(PathCursor)
const encodePathCursor = Schema.encodeSync(PathCursor)

// write_file takes the REST body's fields; its optimistic-concurrency `sha` is named for what it is to an agent
const { labId: _labId, sha: writeSha, ...writeFields } = WriteFile.fields
const expectedSha = writeSha.annotations({
  description: "the blob id the file has now (from read_file or list_files); the write is refused as a conflict if it changed"
})

const Written = Schema.Struct({ ...FileSummary.fields, created: Schema.Boolean })

const EditText = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(1_048_576))

/** How often `needle` occurs in `text`, counting up to two (all an edit needs to know). */
const occurrences = (text: string, needle: string): 0 | 1 | 2 => {
  const first = text.indexOf(needle)
  if (first === -1) return 0
  return text.indexOf(needle, first + 1) === -1 ? 1 : 2
}

/** The files tools: a lab's text files, as `GET/POST/PATCH/DELETE /api/v1/files` serve them. */
export const fileTools = Effect.map(Files, (files) => [
  defineTool({
    name: "read_file",
    toolset: "files",
    access: "read",
    description: "Read one file of the lab: its text and its blob id (sha). Use list_files first when you do not know the path.",
    input: toolInput({ path: ExistingFilePath }),
    output: File,
    run: ({ path }, call) => files.read(call.labId, path)
  }),
  defineTool({
    name: "list_files",
    toolset: "files",
    access: "read",
    description:
      "List the lab's files (path, size, sha, source), in path order, optionally below a directory. Pages: pass nextCursor back as cursor.",
    input: toolInput({ prefix: Schema.optional(DirectoryPrefix), ...ToolPage }),
    output: ToolPageOf(FileSummary),
    run: ({ prefix, limit, cursor }, call) =>
      Effect.gen(function* () {
        const query = yield* pageQueryWith((u) => Either.map(decodePathCursor(u), (c) => c.path), { limit, cursor })
        const listing = yield* files.list(call.labId, prefix ?? "/", query.cursor, query.limit)
        return { items: listing.items, nextCursor: Option.getOrNull(Option.map(listing.next, (path) => encodePathCursor({ path }))) }
      })
  }),
  defineTool({
    name: "write_file",
    toolset: "files",
    access: "write",
    description:
      "Create a file or replace its whole text. With auto-push on, the write becomes a commit in the linked git repository. To change a few lines of a big file, prefer edit_file.",
    input: toolInput({ ...writeFields, expectedSha }),
    output: Written,
    hints: { destructive: true, idempotent: true },
    run: ({ path, content, expectedSha }, call) =>
      Effect.map(files.write(call.labId, path, content, { actor: call.actor, authorName: call.authorName, expectedSha, mode: "create-or-replace" }), ({ file, created }) => ({
        ...file,
        created
      }))
  }),
  defineTool({
    name: "edit_file",
    toolset: "files",
    access: "write",
    description:
      "Replace exactly one occurrence of oldText with newText in a file, without resending the whole file. Fails, changing nothing, when oldText occurs nowhere or more than once: add surrounding lines to make it unique.",
    input: toolInput({ path: ExistingFilePath, oldText: EditText, newText: Schema.String.pipe(Schema.maxLength(1_048_576)) }),
    output: Written,
    hints: { destructive: true },
    run: ({ path, oldText, newText }, call) =>
      Effect.gen(function* () {
        const current = yield* files.read(call.labId, path)
        const found = occurrences(current.content, oldText)
        if (found !== 1) {
          return yield* new InvalidField({
            field: "oldText",
            problem: found === 0 ? `does not occur in ${path}` : `occurs more than once in ${path}: include surrounding text so it occurs once`
          })
        }
        const at = current.content.indexOf(oldText)
        const content = current.content.slice(0, at) + newText + current.content.slice(at + oldText.length)
        // written only if nobody changed the file since it was read (409 conflict otherwise)
        const { file } = yield* files.write(call.labId, path, content, { actor: call.actor, authorName: call.authorName, expectedSha: current.sha, mode: "update" })
        return { ...file, created: false }
      })
  }),
  defineTool({
    name: "delete_file",
    toolset: "files",
    access: "write",
    description: "Delete a file of the lab. With auto-push on, the deletion becomes a commit in the linked repository.",
    input: toolInput({ path: ExistingFilePath, expectedSha }),
    output: DeletedFile,
    hints: { destructive: true },
    run: ({ path, expectedSha }, call) =>
      Effect.map(files.remove(call.labId, path, { actor: call.actor, authorName: call.authorName, expectedSha }), ({ file }) => ({
        labId: call.labId,
        path: file.path,
        sha: file.sha,
        deleted: true as const
      }))
  })
])
