import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { InvalidField } from "../common/DomainErrors.js"
import { okPage } from "../http/Envelope.js"
import { fetched, removed, writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageOf, pageQuery } from "../db/Paging.js"
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
        writing(lab, labId, (scope) => backups.create(scope.labId, scope.actor))
      )
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, backups.get))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, backups.remove))
      .handle("restore", ({ path, payload }) =>
        writing(lab, payload.labId, (scope) => backups.restore(scope.labId, path.id, scope.actor))
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
