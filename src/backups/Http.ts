import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { ValidationError } from "../http/Errors.js"
import { pageQuery, pageOf } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Backups } from "./Backups.js"

export const BackupsHttp = HttpApiBuilder.group(Api, "backups", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const backups = yield* Backups
    return handlers
      .handle("list", ({ urlParams: { labId, status, from, to, ...page } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "read")
          if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) {
            return yield* new ValidationError({ message: "from: must not be after to" })
          }
          const query = yield* pageQuery(page)
          const rows = yield* backups.list(
            lab.id,
            { status: Option.fromNullable(status), from: Option.fromNullable(from), to: Option.fromNullable(to) },
            query.cursor,
            query.limit
          )
          return yield* okPage(pageOf(rows, query.limit))
        })
      )
      .handle("create", ({ payload: { labId } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* Effect.flatMap(backups.create(lab.id, principal.id), ok)
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => backups.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* Effect.flatMap(backups.remove(lab.id, path.id, principal.id), ok)
        })
      )
      .handle("restore", ({ path, payload }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(payload.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* Effect.flatMap(backups.restore(lab.id, path.id, principal.id), ok)
        })
      )
      .handle("download", ({ path, urlParams }) =>
        Effect.gen(function* () {
          // the archive holds the lab's sealed secrets (git token, webhook secret): reading it is a write key's right
          const lab = yield* labs.access(urlParams.labId, "write")
          const { backup, size, bytes } = yield* backups.download(lab.id, path.id)
          return HttpServerResponse.stream(bytes, {
            contentType: "application/gzip",
            contentLength: size,
            headers: {
              "content-disposition": `attachment; filename="${lab.slug}-${backup.id}.ndjson.gz"`,
              etag: `"${backup.sha256 ?? backup.id}"`,
              "x-content-sha256": backup.sha256 ?? ""
            }
          })
        })
      )
  })
)
