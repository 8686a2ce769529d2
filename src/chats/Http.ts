import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Chats } from "./Chats.js"

export const ChatsHttp = HttpApiBuilder.group(Api, "chats", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const chats = yield* Chats
    const writer = (labId: string) => Effect.all({ lab: labs.access(labId, "write"), principal: CurrentPrincipal })
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery({ limit, cursor })]).pipe(
          Effect.flatMap(([lab, page]) => chats.list(lab.id, { ...page, ...filter })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => chats.create(lab.id, input, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => chats.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => chats.update(lab.id, path.id, patch, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("addMessage", ({ path, payload: { labId, ...input } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => chats.addMessage(lab.id, path.id, input, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("promote", ({ path, payload: { labId, ...input } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => chats.promote(lab.id, path.id, input, principal.id)),
          Effect.flatMap(ok)
        )
      )
  })
)
