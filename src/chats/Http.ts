import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { updated } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Chats } from "./Chats.js"

export const ChatsHttp = HttpApiBuilder.group(Api, "chats", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const chats = yield* Chats
    return labRoutes(handlers, lab, chats)
      .handle("addMessage", ({ path, payload }) => updated(lab, path.id, payload, chats.addMessage))
      .handle("promote", ({ path, payload }) => updated(lab, path.id, payload, chats.promote))
  })
)
