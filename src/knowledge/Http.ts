import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { KnowledgeBase } from "./KnowledgeBase.js"

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const knowledge = yield* KnowledgeBase
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery({ limit, cursor })]).pipe(
          Effect.flatMap(([lab, page]) => knowledge.list(lab.id, { ...page, ...filter })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* knowledge.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => knowledge.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* knowledge.update(lab.id, path.id, patch, principal.id))
        })
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* knowledge.remove(lab.id, path.id, principal.id))
        })
      )
  })
)
