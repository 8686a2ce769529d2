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
  docs: {
    list: {
      summary: "List chats",
      description: "Extension. The lab's chats, newest first, filtered by creation time, without their messages: get one chat for those."
    },
    create: {
      summary: "Open a chat",
      description: "Extension. Starts an empty chat, optionally titled; append messages with POST /api/v1/chats/{id}/messages."
    },
    get: {
      summary: "Get a chat with its messages",
      description: "Extension. One chat by id, with its messages in the order they were added, its outcome and its promotion, if any."
    },
    update: {
      summary: "Set a chat's title or outcome",
      description: "Extension. Sets or clears (`null`) the title or the outcome, the chat's conclusion that promotion turns into knowledge or a task. The outcome cannot change once promoted (409)."
    }
  }
})
  .add(
    HttpApiEndpoint.post("addMessage", "/chats/:id/messages")
      .setPath(ChatPath)
      .setPayload(AddMessage)
      .addSuccess(Envelope(ChatMessage), { status: 201 })
      .annotateContext(
        OpenApi.annotations({
          summary: "Add a message to a chat",
          description: "Extension. Appends one message (a role and its content) at the end of the chat; messages are kept in order and still arrive after promotion."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("promote", "/chats/:id/promote")
      .setPath(ChatPath)
      .setPayload(PromoteChat)
      .addSuccess(Envelope(PromotionResult), { status: 201 })
      .annotateContext(
        OpenApi.annotations({
          summary: "Promote a chat's outcome",
          description:
            "Turns the chat's outcome into a knowledge entry (`as: knowledge`) or a task (`as: task`), titled by `title`, else the chat's title, else the outcome's first line. A chat is promoted once: 409 when it has no outcome or was promoted already (the message names the entry made the first time)."
        })
      )
  )
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(
    OpenApi.Description,
    "The orchestrator's chats: messages and a conclusion (outcome), promoted once into a knowledge entry or a task. Promotion is the catalog route; the chat store is an extension."
  ) {}
