import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { Conflict, NotFound } from "../http/Errors.js"
import { KnowledgeBase } from "../knowledge/KnowledgeBase.js"
import { Tasks } from "../tasks/Tasks.js"
import {
  type AddMessage,
  type Chat,
  type ChatDetail,
  type ChatMessage,
  type CreateChat,
  MAX_MESSAGES,
  type PromoteChat,
  type PromotionResult,
  type UpdateChat
} from "./Chat.js"
import { type ChatFilter, ChatsRepo } from "./ChatsRepo.js"

const TITLE_MAX = 300

/** The first non-empty line of a text, without markdown heading marks, cut to the title length. */
const firstLine = (text: string) => {
  const line = text
    .split("\n")
    .map((l) => l.replace(/^#+\s*/, "").trim())
    .find((l) => l.length > 0) ?? "Chat outcome"
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line
}

/**
 * The orchestrator's chats: messages in order, an outcome (the conclusion),
 * and promotion of that outcome into a knowledge entry or a task, exactly once.
 */
export class Chats extends Effect.Service<Chats>()("Chats", {
  dependencies: [ChatsRepo.Default, KnowledgeBase.Default, Tasks.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ChatsRepo
    const knowledge = yield* KnowledgeBase
    const tasks = yield* Tasks
    const activity = yield* ActivityRepo

    const notFound = (id: string) => new NotFound({ message: `no chat ${id} in this lab` })
    const found = (id: string) =>
      (o: Option.Option<Chat>): Effect.Effect<Chat, NotFound> => (Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(notFound(id)))

    const detail = (chat: Chat) => Effect.map(repo.messages(chat.id), (messages): ChatDetail => ({ ...chat, messages }))

    const get = (labId: string, id: string) => Effect.flatMap(Effect.flatMap(repo.find(labId, id), found(id)), detail)

    const create = (labId: string, input: Omit<CreateChat, "labId">, actor: string) =>
      Effect.gen(function* () {
        const now = new Date()
        const chat: Chat = {
          id: newId("chat"),
          labId,
          title: input.title ?? null,
          outcome: null,
          promotion: null,
          messageCount: 0,
          createdBy: actor,
          createdAt: now,
          updatedAt: now
        }
        yield* repo.insert(chat)
        yield* activity.record({
          labId,
          kind: "chat.created",
          ref: chat.id,
          actor,
          message: chat.title ? `Opened chat ${chat.title}` : "Opened a chat",
          data: { title: chat.title }
        })
        const created: ChatDetail = { ...chat, messages: [] }
        return created
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const addMessage = (labId: string, chatId: string, input: Omit<AddMessage, "labId">, actor: string) =>
      Effect.gen(function* () {
        const chat = yield* Effect.flatMap(repo.findForUpdate(labId, chatId), found(chatId))
        if (chat.messageCount >= MAX_MESSAGES) {
          return yield* new Conflict({ message: `chat ${chatId} has ${MAX_MESSAGES} messages, the most a chat holds` })
        }
        const now = new Date()
        const message: ChatMessage = { id: newId("msg"), chatId, seq: chat.messageCount + 1, role: input.role, content: input.content, createdAt: now }
        yield* repo.insertMessage(labId, message)
        yield* repo.update({ ...chat, messageCount: message.seq, updatedAt: now })
        yield* activity.record({
          labId,
          kind: "chat.message_added",
          ref: chatId,
          actor,
          message: `New ${message.role} message in ${chat.title ?? `chat ${chatId}`}`,
          data: { messageId: message.id, seq: message.seq, role: message.role }
        })
        return message
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const update = (labId: string, id: string, patch: Omit<UpdateChat, "labId">, actor: string) =>
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), found(id))
        const outcome = patch.outcome === undefined ? current.outcome : patch.outcome
        if (outcome !== current.outcome && current.promotion !== null) {
          return yield* new Conflict({
            message: `chat ${id} was promoted to ${current.promotion.as} ${current.promotion.ref}: its outcome can no longer change`
          })
        }
        const next: Chat = { ...current, title: patch.title === undefined ? current.title : patch.title, outcome }
        const changed = (["title", "outcome"] as const).filter((f) => next[f] !== current[f])
        if (changed.length === 0) return yield* detail(current)
        const updated: Chat = { ...next, updatedAt: new Date() }
        yield* repo.update(updated)
        const outcomeChange = outcome === current.outcome ? {} : { outcome: outcome === null ? "cleared" : "set" }
        yield* activity.record({
          labId,
          kind: "chat.updated",
          ref: id,
          actor,
          message:
            outcome !== current.outcome && outcome !== null
              ? `Concluded ${updated.title ?? `chat ${id}`}: ${firstLine(outcome)}`
              : `Updated ${updated.title ?? `chat ${id}`} (${changed.join(", ")})`,
          data: { changed, ...outcomeChange }
        })
        return yield* detail(updated)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const promote = (labId: string, id: string, input: Omit<PromoteChat, "labId">, actor: string) =>
      Effect.gen(function* () {
        const chat = yield* Effect.flatMap(repo.findForUpdate(labId, id), found(id))
        if (chat.promotion !== null) {
          return yield* new Conflict({
            message: `chat ${id} was promoted already, to ${chat.promotion.as} ${chat.promotion.ref} at ${chat.promotion.at.toISOString()}`
          })
        }
        if (chat.outcome === null) {
          return yield* new Conflict({
            message: `chat ${id} has no outcome yet: set one with PATCH /api/v1/chats/${id} before promoting it`
          })
        }
        const title = input.title ?? chat.title ?? firstLine(chat.outcome)
        const now = new Date()
        const result: PromotionResult =
          input.as === "knowledge"
            ? {
                chatId: id,
                as: "knowledge",
                promotedAt: now,
                entry: yield* knowledge.create(
                  labId,
                  {
                    title,
                    body: chat.outcome,
                    sources: [chat.title === null ? { ref: `chats/${id}` } : { title: chat.title, ref: `chats/${id}` }],
                    tags: []
                  },
                  actor,
                  { chatId: id }
                )
              }
            : {
                chatId: id,
                as: "task",
                promotedAt: now,
                entry: yield* tasks.create(labId, { title, description: chat.outcome, status: "todo" }, actor, { chatId: id })
              }
        yield* repo.update({ ...chat, promotion: { as: input.as, ref: result.entry.id, at: now }, updatedAt: now })
        yield* activity.record({
          labId,
          kind: "chat.promoted",
          ref: id,
          actor,
          message: `Promoted ${chat.title ?? `chat ${id}`} to ${input.as === "knowledge" ? "knowledge" : "a task"}: ${title}`,
          data: { as: input.as, entryId: result.entry.id, ...(input.as === "knowledge" ? { knowledgeId: result.entry.id } : { taskId: result.entry.id }) }
        })
        return result
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list: (labId: string, filter: ChatFilter) => repo.list(labId, filter), get, create, addMessage, update, promote }
  })
}) {}
