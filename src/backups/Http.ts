import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { InvalidField } from "../common/DomainErrors.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageOf, pageQuery } from "../http/Pagination.js"
import { Backups } from "./Backups.js"

export const BackupsHttp = HttpApiBuilder.group(Api, "backups", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const backups = yield* Backups
    return handlers
      .handle("list", ({ urlParams: { labId, status, from, to, ...page } }) =>
        lab.read(labId, (scope) =>
          Effect.gen(function* () {
            if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) {
              return yield* new InvalidField({ field: "from", problem: "must not be after to" })
            }
            const query = yield* pageQuery(page)
            const rows = yield* backups.list(
              scope.labId,
              { status: Option.fromNullable(status), from: Option.fromNullable(from), to: Option.fromNullable(to) },
              query.cursor,
              query.limit
            )
            return pageOf(rows, query.limit)
          })
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId } }) =>
        lab.write(labId, (scope) => backups.create(scope.labId, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => backups.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => backups.remove(scope.labId, path.id, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("restore", ({ path, payload }) =>
        lab.write(payload.labId, (scope) => backups.restore(scope.labId, path.id, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("download", ({ path, urlParams }) =>
        // the archive holds the lab's sealed secrets (git token, webhook secret): reading it is a write key's right
        lab.write(urlParams.labId, (scope) =>
          Effect.map(backups.download(scope.labId, path.id), ({ backup, size, bytes }) =>
            HttpServerResponse.stream(bytes, {
              contentType: "application/gzip",
              contentLength: size,
              headers: {
                "content-disposition": `attachment; filename="${scope.lab.slug}-${backup.id}.ndjson.gz"`,
                etag: `"${backup.sha256 ?? backup.id}"`,
                "x-content-sha256": backup.sha256 ?? ""
              }
            })
          )
        )
      )
  })
)
