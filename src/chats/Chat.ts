import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Text, Timestamp } from "../common/Schemas.js"
import { KnowledgeEntry } from "../knowledge/Knowledge.js"
import { Task } from "../tasks/Task.js"

export const ChatRole = Schema.Literal("user", "assistant", "tool")
export type ChatRole = typeof ChatRole.Type

export const MAX_MESSAGES = 500
export const MAX_MESSAGE_CHARS = 16_000
/** A task's description holds at most 20,000 characters, so an outcome does too. */
export const MAX_OUTCOME_CHARS = 20_000

export const PromotionKind = Schema.Literal("knowledge", "task")
export type PromotionKind = typeof PromotionKind.Type

export const Promotion = Schema.Struct({
  as: PromotionKind,
  ref: Schema.String.annotations({ description: "the id of the knowledge entry (kn_…) or task (task_…) it created" }),
  at: Timestamp
}).annotations({ identifier: "ChatPromotion" })

export const ChatId = resourceId("ChatId", "chat")
export type ChatId = typeof ChatId.Type

export const Chat = LabResource(ChatId, {
  title: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String).annotations({ description: "the chat's conclusion (markdown); what promote turns into knowledge or a task" }),
  promotion: Schema.NullOr(Promotion).annotations({ description: "set once, by promote" }),
  messageCount: Schema.Number,
  createdBy: Schema.String.annotations({ description: "the credential that opened it" })
}).annotations({ identifier: "Chat" })
export type Chat = typeof Chat.Type

export const ChatMessage = Schema.Struct({
  id: Schema.String.annotations({ description: "msg_…" }),
  chatId: Schema.String,
  seq: Schema.Number.annotations({ description: "1, 2, 3… in the order the chat received them" }),
  role: ChatRole,
  content: Schema.String,
  createdAt: Timestamp
}).annotations({ identifier: "ChatMessage" })
export type ChatMessage = typeof ChatMessage.Type

export const ChatDetail = Schema.Struct({
  ...Chat.fields,
  messages: Schema.Array(ChatMessage).annotations({ description: `in order; at most ${MAX_MESSAGES}` })
}).annotations({ identifier: "ChatDetail" })
export type ChatDetail = typeof ChatDetail.Type

const nonBlank = (max: number) =>
  Text(max).pipe(Schema.filter((s) => s.trim().length > 0 || "must not be empty"))

const ChatTitle = Name(300)

export const CreateChat = Body({
  labId: LabRef,
  title: Schema.optional(ChatTitle)
}).annotations({ identifier: "CreateChat" })
export type CreateChat = typeof CreateChat.Type

export const AddMessage = Body({
  labId: LabRef,
  role: ChatRole,
  content: nonBlank(MAX_MESSAGE_CHARS).annotations({ description: `at most ${MAX_MESSAGE_CHARS} characters` })
}).annotations({ identifier: "AddChatMessage" })
export type AddMessage = typeof AddMessage.Type

export const UpdateChat = Body({
  labId: LabRef,
  title: Schema.optional(Schema.NullOr(ChatTitle)),
  outcome: Schema.optional(Schema.NullOr(nonBlank(MAX_OUTCOME_CHARS))).annotations({
    description: `markdown, at most ${MAX_OUTCOME_CHARS} characters; null clears it; frozen once the chat is promoted`
  })
}).annotations({ identifier: "UpdateChat" })
export type UpdateChat = typeof UpdateChat.Type

export const PromoteChat = Body({
  labId: LabRef,
  as: PromotionKind,
  title: Schema.optional(Name(300)).annotations({
    description: "the new entry's title; default: the chat's title, else the outcome's first line"
  })
}).annotations({ identifier: "PromoteChat" })
export type PromoteChat = typeof PromoteChat.Type

export const PromotionResult = Schema.Union(
  Schema.Struct({ chatId: Schema.String, as: Schema.Literal("knowledge"), entry: KnowledgeEntry, promotedAt: Timestamp }),
  Schema.Struct({ chatId: Schema.String, as: Schema.Literal("task"), entry: Task, promotedAt: Timestamp })
).annotations({ identifier: "ChatPromotionResult" })
export type PromotionResult = typeof PromotionResult.Type

export const ChatQuery = Schema.Struct({ labId: LabRef, ...DateRange })
