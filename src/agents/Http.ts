import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Agents } from "./Agents.js"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const agents = yield* Agents
    return handlers
      .handle("list", ({ urlParams: { labId, status, ...page } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) => agents.list(lab.id, { ...page, status: Option.fromNullable(status) })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* agents.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => agents.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* agents.update(lab.id, path.id, patch, principal.id))
        })
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* agents.remove(lab.id, path.id, principal.id))
        })
      )
  })
)
