import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Chats } from "./Chats.js"

export const ChatsHttp = HttpApiBuilder.group(Api, "chats", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const chats = yield* Chats
    return labRoutes(handlers, lab, chats)
      .handle("addMessage", ({ path, payload: { labId, ...input } }) =>
        writing(lab, labId, (scope) => chats.addMessage(scope.labId, path.id, input, scope.actor))
      )
      .handle("promote", ({ path, payload: { labId, ...input } }) =>
        writing(lab, labId, (scope) => chats.promote(scope.labId, path.id, input, scope.actor))
      )
  })
)
