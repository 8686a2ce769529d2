import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps } from "../activity/ResourceService.js"
import { changedFields, insertLogged } from "../activity/Changes.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { KnowledgeBase } from "../knowledge/KnowledgeBase.js"
import type { LabId } from "../labs/LabId.js"
import { Tasks } from "../tasks/Tasks.js"
import {
  type AddMessage,
  type Chat,
  ChatId,
  type ChatDetail,
  type ChatMessage,
  type CreateChat,
  MAX_MESSAGES,
  type PromoteChat,
  type PromotionResult,
  type UpdateChat
} from "./Chat.js"
import { type ChatFilter, ChatsRepo } from "./ChatsRepo.js"
import { inTransaction } from "../db/Transaction.js"

const TITLE_MAX = 300

/** The first non-empty line of a text, without markdown heading marks, cut to the title length. */
const firstLine = (text: string) => {
  const line = text
    .split("\n")
    .map((l) => l.replace(/^#+\s*/, "").trim())
    .find((l) => l.length > 0) ?? "Chat outcome"
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line
}

const RESOURCE = "chat"

interface Deps extends ResourceDeps<ChatsRepo> {
  readonly knowledge: KnowledgeBase
  readonly tasks: Tasks
}

const conflict = (id: ChatId, problem: string) => new StateConflict({ resource: RESOURCE, id, problem })

const detail = (repo: ChatsRepo, chat: Chat) =>
  Effect.map(repo.messages(chat.id), (messages): ChatDetail => ({ ...chat, messages }))

const create = ({ sql, repo, activity }: Deps, labId: LabId, input: Omit<CreateChat, "labId">, actor: string) =>
  Effect.gen(function* () {
    const now = new Date()
    const chat: Chat = {
      id: ChatId.make(newId("chat")),
      labId,
      title: input.title ?? null,
      outcome: null,
      promotion: null,
      messageCount: 0,
      createdBy: actor,
      createdAt: now,
      updatedAt: now
    }
    yield* insertLogged(activity, repo.insert, chat, actor, {
      kind: "chat.created",
      message: chat.title ? `Opened chat ${chat.title}` : "Opened a chat",
      data: { title: chat.title }
    })
    const created: ChatDetail = { ...chat, messages: [] }
    return created
  }).pipe(inTransaction(sql))

const addMessage = (
  { sql, repo, activity }: Deps,
  labId: LabId,
  chatId: ChatId,
  input: Omit<AddMessage, "labId">,
  actor: string
) =>
  Effect.gen(function* () {
    const chat = yield* orNotFound(RESOURCE, chatId)(repo.findForUpdate(labId, chatId))
    if (chat.messageCount >= MAX_MESSAGES) {
      return yield* conflict(chatId, `chat ${chatId} has ${MAX_MESSAGES} messages, the most a chat holds`)
    }
    const now = new Date()
    const seq = chat.messageCount + 1
    const message: ChatMessage = { id: newId("msg"), chatId, seq, role: input.role, content: input.content, createdAt: now }
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
  }).pipe(inTransaction(sql))

const update = ({ sql, repo, activity }: Deps, labId: LabId, id: ChatId, patch: Omit<UpdateChat, "labId">, actor: string) =>
  Effect.gen(function* () {
    const current = yield* orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))
    const outcome = patch.outcome === undefined ? current.outcome : patch.outcome
    if (outcome !== current.outcome && current.promotion !== null) {
      const { as, ref } = current.promotion
      return yield* conflict(id, `chat ${id} was promoted to ${as} ${ref}: its outcome can no longer change`)
    }
    const next: Chat = { ...current, title: patch.title === undefined ? current.title : patch.title, outcome }
    const changed = changedFields(["title", "outcome"] as const, current, next)
    if (changed.length === 0) return yield* detail(repo, current)
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
    return yield* detail(repo, updated)
  }).pipe(inTransaction(sql))

/** The knowledge entry or task a chat's outcome becomes. */
const promoted = (deps: Deps, labId: LabId, chat: Chat, outcome: string, as: PromoteChat["as"], title: string, actor: string) => {
  const now = new Date()
  const chatId = chat.id
  return as === "knowledge"
    ? Effect.map(
        deps.knowledge.create(
          labId,
          {
            title,
            body: outcome,
            sources: [chat.title === null ? { ref: `chats/${chatId}` } : { title: chat.title, ref: `chats/${chatId}` }],
            tags: []
          },
          actor,
          { chatId }
        ),
        (entry): PromotionResult => ({ chatId, as: "knowledge", promotedAt: now, entry })
      )
    : Effect.map(
        deps.tasks.create(labId, { title, description: outcome, status: "todo" }, actor, { chatId }),
        (entry): PromotionResult => ({ chatId, as: "task", promotedAt: now, entry })
      )
}

const promote = (deps: Deps, labId: LabId, id: ChatId, input: Omit<PromoteChat, "labId">, actor: string) =>
  Effect.gen(function* () {
    const chat = yield* orNotFound(RESOURCE, id)(deps.repo.findForUpdate(labId, id))
    if (chat.promotion !== null) {
      const { as, ref, at } = chat.promotion
      return yield* conflict(id, `chat ${id} was promoted already, to ${as} ${ref} at ${at.toISOString()}`)
    }
    if (chat.outcome === null) {
      return yield* conflict(id, `chat ${id} has no outcome yet: set one with PATCH /api/v1/chats/${id} before promoting it`)
    }
    const title = input.title ?? chat.title ?? firstLine(chat.outcome)
    const result = yield* promoted(deps, labId, chat, chat.outcome, input.as, title, actor)
    const now = result.promotedAt
    const entryId = result.entry.id
    yield* deps.repo.update({ ...chat, promotion: { as: input.as, ref: entryId, at: now }, updatedAt: now })
    yield* deps.activity.record({
      labId,
      kind: "chat.promoted",
      ref: id,
      actor,
      message: `Promoted ${chat.title ?? `chat ${id}`} to ${input.as === "knowledge" ? "knowledge" : "a task"}: ${title}`,
      data: { as: input.as, entryId, ...(input.as === "knowledge" ? { knowledgeId: entryId } : { taskId: entryId }) }
    })
    return result
  }).pipe(inTransaction(deps.sql))

/**
 * The orchestrator's chats: messages in order, an outcome (the conclusion),
 * and promotion of that outcome into a knowledge entry or a task, exactly once.
 */
export class Chats extends Effect.Service<Chats>()("Chats", {
  dependencies: [ChatsRepo.Default, KnowledgeBase.Default, Tasks.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(ChatsRepo), knowledge: KnowledgeBase, tasks: Tasks })
    const { repo } = deps
    return {
      list: (labId: LabId, filter: ChatFilter) => repo.list(labId, filter),
      get: (labId: LabId, id: ChatId) =>
        Effect.flatMap(orNotFound(RESOURCE, id)(repo.find(labId, id)), (chat) => detail(repo, chat)),
      create: (labId: LabId, input: Omit<CreateChat, "labId">, actor: string) => create(deps, labId, input, actor),
      addMessage: (labId: LabId, chatId: ChatId, input: Omit<AddMessage, "labId">, actor: string) =>
        addMessage(deps, labId, chatId, input, actor),
      update: (labId: LabId, id: ChatId, patch: Omit<UpdateChat, "labId">, actor: string) =>
        update(deps, labId, id, patch, actor),
      promote: (labId: LabId, id: ChatId, input: Omit<PromoteChat, "labId">, actor: string) =>
        promote(deps, labId, id, input, actor)
    }
  })
}) {}
