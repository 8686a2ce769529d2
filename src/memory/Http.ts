import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Memories } from "./Memories.js"

export const MemoryHttp = HttpApiBuilder.group(Api, "memory", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const memories = yield* Memories
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery({ limit, cursor })]).pipe(
          Effect.flatMap(([lab, page]) => memories.list(lab.id, { ...page, ...filter })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* memories.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => memories.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* memories.remove(lab.id, path.id, principal.id))
        })
      )
  })
)
