import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Datasets } from "./Datasets.js"

export const DatasetsHttp = HttpApiBuilder.group(Api, "datasets", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const datasets = yield* Datasets
    return handlers
      .handle("list", ({ urlParams: { labId, format, tag, from, to, ...page } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) =>
            datasets.list(lab.id, {
              ...page,
              format: Option.fromNullable(format),
              tag: Option.fromNullable(tag),
              from: Option.fromNullable(from),
              to: Option.fromNullable(to)
            })
          ),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* datasets.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => datasets.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* datasets.update(lab.id, path.id, patch, principal.id))
        })
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* datasets.remove(lab.id, path.id, principal.id))
        })
      )
  })
)
