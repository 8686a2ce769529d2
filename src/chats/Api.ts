import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Envelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { createIn, getById, labGroup, listOf, paged, updateById } from "../http/LabEndpoints.js"
import { AddMessage, Chat, ChatDetail, ChatId, ChatMessage, ChatQuery, CreateChat, PromoteChat, PromotionResult, UpdateChat } from "./Chat.js"

const ChatPath = Schema.Struct({ id: ChatId })

/** POST /chats/{id}/promote is the catalog route; the chat store around it is an extension. */
export class ChatsApi extends HttpApiGroup.make("chats")
  .add(
    listOf("/chats", paged(ChatQuery.fields), Chat).annotate(
      OpenApi.Summary,
      "The lab's chats, newest first, without their messages (extension)"
    )
  )
  .add(createIn("/chats", CreateChat, ChatDetail).annotate(OpenApi.Summary, "Open a chat (extension)"))
  .add(getById("/chats/:id", ChatPath, ChatDetail).annotate(OpenApi.Summary, "One chat with its messages in order (extension)"))
  .add(
    updateById("/chats/:id", ChatPath, UpdateChat, ChatDetail).annotate(
      OpenApi.Summary,
      "Set a chat's title or outcome (extension); the outcome is frozen once promoted"
    )
  )
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
