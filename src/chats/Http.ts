import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Chats } from "./Chats.js"

export const ChatsHttp = HttpApiBuilder.group(Api, "chats", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const chats = yield* Chats
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery({ limit, cursor }), (page) => chats.list(scope.labId, { ...page, ...filter }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => chats.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => chats.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        lab.write(labId, (scope) => chats.update(scope.labId, path.id, patch, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("addMessage", ({ path, payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => chats.addMessage(scope.labId, path.id, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("promote", ({ path, payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => chats.promote(scope.labId, path.id, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
  })
)
