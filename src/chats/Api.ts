import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Envelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { AddMessage, Chat, ChatDetail, ChatId, ChatMessage, ChatQuery, CreateChat, PromoteChat, PromotionResult, UpdateChat } from "./Chat.js"

const ChatPath = Schema.Struct({ id: ChatId })

/** POST /chats/{id}/promote is the catalog route; the chat store around it is an extension. */
export class ChatsApi extends labResource("chats", {
  path: "/chats",
  params: ChatPath,
  query: paged(ChatQuery.fields),
  item: Chat,
  detail: ChatDetail,
  create: CreateChat,
  update: UpdateChat,
  summaries: {
    list: "The lab's chats, newest first, without their messages (extension)",
    create: "Open a chat (extension)",
    get: "One chat with its messages in order (extension)",
    update: "Set a chat's title or outcome (extension); the outcome is frozen once promoted"
  }
})
  .add(
    HttpApiEndpoint.post("addMessage", "/chats/:id/messages")
      .setPath(ChatPath)
      .setPayload(AddMessage)
      .addSuccess(Envelope(ChatMessage), { status: 201 })
      .annotate(OpenApi.Summary, "Append a message (extension)")
  )
  .add(
    HttpApiEndpoint.post("promote", "/chats/:id/promote")
      .setPath(ChatPath)
      .setPayload(PromoteChat)
      .addSuccess(Envelope(PromotionResult), { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Turn the chat's outcome into a knowledge entry or a task, once (409 without an outcome or when promoted already)"
      )
  )
  .pipe(labGroup)
  .addError(ConflictWire) {}
