import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Either, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { Envelope, ok, okPage, respondWith } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQueryWith } from "../db/Paging.js"
import { File, PathCursor } from "./File.js"
import { Files } from "./Files.js"

const decodePathCursor = Schema.decodeUnknownEither(PathCursor)
const encodePathCursor = Schema.encodeSync(PathCursor)

const CreatedFile = Envelope(File)

export const FilesHttp = HttpApiBuilder.group(Api, "files", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const files = yield* Files
    return handlers
      .handle("read", ({ urlParams: { labId, path, prefix, ...page } }) =>
        lab.read(labId, (scope) =>
          Effect.gen(function* () {
            if (path !== undefined) return yield* Effect.flatMap(files.read(scope.labId, path), ok)
            const query = yield* pageQueryWith((u) => Either.map(decodePathCursor(u), (c) => c.path), page)
            const listing = yield* files.list(scope.labId, prefix ?? "/", query.cursor, query.limit)
            return yield* okPage({
              items: listing.items,
              nextCursor: Option.getOrNull(Option.map(listing.next, (path) => encodePathCursor({ path })))
            })
          })
        )
      )
      .handle("write", ({ payload: { labId, path, content, sha } }) =>
        lab.write(labId, (scope) =>
          Effect.gen(function* () {
            const options = { actor: scope.actor, authorName: scope.authorName, expectedSha: sha, mode: "create-or-replace" } as const
            const { file, created } = yield* files.write(scope.labId, path, content, options)
            const body = yield* ok(file)
            return created ? yield* respondWith(CreatedFile, body, 201) : body
          })
        )
      )
      .handle("update", ({ payload: { labId, path, content, sha } }) =>
        lab
          .write(labId, (scope) => files.write(scope.labId, path, content, { actor: scope.actor, authorName: scope.authorName, expectedSha: sha, mode: "update" }))
          .pipe(Effect.flatMap(({ file }) => ok(file)))
      )
      .handle("delete", ({ urlParams: { labId, path, sha } }) =>
        lab
          .write(labId, (scope) =>
            Effect.map(files.remove(scope.labId, path, { actor: scope.actor, authorName: scope.authorName, expectedSha: sha }), ({ file }) => ({
              labId: scope.labId,
              path: file.path,
              sha: file.sha,
              deleted: true as const
            }))
          )
          .pipe(Effect.flatMap(ok))
      )
  })
)
