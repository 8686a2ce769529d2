import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, updated, writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Chats } from "./Chats.js"

export const ChatsHttp = HttpApiBuilder.group(Api, "chats", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const chats = yield* Chats
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, chats.list))
      .handle("create", ({ payload }) => created(lab, payload, chats.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, chats.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, chats.update))
      .handle("addMessage", ({ path, payload: { labId, ...input } }) =>
        writing(lab, labId, (scope) => chats.addMessage(scope.labId, path.id, input, scope.actor))
      )
      .handle("promote", ({ path, payload: { labId, ...input } }) =>
        writing(lab, labId, (scope) => chats.promote(scope.labId, path.id, input, scope.actor))
      )
  })
)
