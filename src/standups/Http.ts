import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Standups } from "./Standups.js"

export const StandupsHttp = HttpApiBuilder.group(Api, "standups", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const standups = yield* Standups
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery({ limit, cursor })]).pipe(
          Effect.flatMap(([lab, page]) => standups.list(lab.id, { ...page, ...filter })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* standups.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => standups.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
  })
)
