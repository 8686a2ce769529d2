import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { Envelope, ok, okPage, respondWith } from "../http/Envelope.js"
import { cursorFromString, pageQueryWith } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { File } from "./File.js"
import { Files } from "./Files.js"

/** Files are listed by path; the cursor is the last path seen. */
const PathCursor = cursorFromString(Schema.Struct({ path: Schema.String }))
const decodePathCursor = Schema.decodeUnknownEither(PathCursor)
const encodePathCursor = Schema.encodeSync(PathCursor)

const CreatedFile = Envelope(File)

export const FilesHttp = HttpApiBuilder.group(Api, "files", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const files = yield* Files
    return handlers
      .handle("read", ({ urlParams: { labId, path, prefix, ...page } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "read")
          if (path !== undefined) return yield* Effect.flatMap(files.read(lab.id, path), ok)
          const query = yield* pageQueryWith((u) => Either.map(decodePathCursor(u), (c) => c.path), page)
          const listing = yield* files.list(lab.id, prefix ?? "/", query.cursor, query.limit)
          return yield* okPage({
            items: listing.items,
            nextCursor: Option.getOrNull(Option.map(listing.next, (path) => encodePathCursor({ path })))
          })
        })
      )
      .handle("write", ({ payload: { labId, path, content, sha } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          const { file, created } = yield* files.write(lab.id, path, content, {
            actor: principal.id,
            expectedSha: sha,
            mode: "create-or-replace"
          })
          const body = yield* ok(file)
          return created ? yield* respondWith(CreatedFile, body, 201) : body
        })
      )
      .handle("update", ({ payload: { labId, path, content, sha } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          const { file } = yield* files.write(lab.id, path, content, { actor: principal.id, expectedSha: sha, mode: "update" })
          return yield* ok(file)
        })
      )
      .handle("delete", ({ urlParams: { labId, path, sha } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          const { file } = yield* files.remove(lab.id, path, { actor: principal.id, expectedSha: sha })
          return yield* ok({ labId: lab.id, path: file.path, sha: file.sha, deleted: true as const })
        })
      )
  })
)
