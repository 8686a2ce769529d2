import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { AddMessage, Chat, ChatDetail, ChatId, ChatMessage, ChatQuery, CreateChat, PromoteChat, PromotionResult, UpdateChat } from "./Chat.js"

const ChatPath = Schema.Struct({ id: ChatId })

/** POST /chats/{id}/promote is the catalog route; the chat store around it is an extension. */
export class ChatsApi extends HttpApiGroup.make("chats")
  .add(
    HttpApiEndpoint.get("list", "/chats")
      .setUrlParams(Schema.Struct({ ...ChatQuery.fields, ...PageParams }))
      .addSuccess(ListEnvelope(Chat))
      .annotate(OpenApi.Summary, "The lab's chats, newest first, without their messages (extension)")
  )
  .add(
    HttpApiEndpoint.post("create", "/chats")
      .setPayload(CreateChat)
      .addSuccess(Envelope(ChatDetail), { status: 201 })
      .annotate(OpenApi.Summary, "Open a chat (extension)")
  )
  .add(
    HttpApiEndpoint.get("get", "/chats/:id")
      .setPath(ChatPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(ChatDetail))
      .annotate(OpenApi.Summary, "One chat with its messages in order (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/chats/:id")
      .setPath(ChatPath)
      .setPayload(UpdateChat)
      .addSuccess(Envelope(ChatDetail))
      .annotate(OpenApi.Summary, "Set a chat's title or outcome (extension); the outcome is frozen once promoted")
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
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
