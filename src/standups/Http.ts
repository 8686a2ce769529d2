import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Standups } from "./Standups.js"

export const StandupsHttp = HttpApiBuilder.group(Api, "standups", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const standups = yield* Standups
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery({ limit, cursor }), (page) => standups.list(scope.labId, { ...page, ...filter }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => standups.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => standups.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
  })
)
