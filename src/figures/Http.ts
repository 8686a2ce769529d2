import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Figures } from "./Figures.js"

export const FiguresHttp = HttpApiBuilder.group(Api, "figures", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const figures = yield* Figures
    return handlers
      .handle("list", ({ urlParams: { labId, source, experimentId, from, to, ...page } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) =>
            figures.list(lab.id, {
              ...page,
              source: Option.fromNullable(source),
              experimentId: Option.fromNullable(experimentId),
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
          return yield* ok(yield* figures.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => figures.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* figures.update(lab.id, path.id, patch, principal.id))
        })
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* figures.remove(lab.id, path.id, principal.id))
        })
      )
  })
)
