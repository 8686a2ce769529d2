import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { Chat, ChatId, ChatMessage, PromotionKind } from "./Chat.js"

const Date_ = Schema.typeSchema(Timestamp)

/** A chat as stored: its promotion in three columns, all null until it is promoted. */
const Stored = Schema.Struct({
  id: ChatId,
  labId: Schema.String,
  title: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String),
  promotedAs: Schema.NullOr(PromotionKind),
  promotedRef: Schema.NullOr(Schema.String),
  promotedAt: Schema.NullOr(Date_),
  messageCount: Schema.Number,
  createdBy: Schema.String,
  createdAt: Date_,
  updatedAt: Date_
})

const stored = ({ promotion, ...rest }: Chat): typeof Stored.Type => ({
  ...rest,
  promotedAs: promotion?.as ?? null,
  promotedRef: promotion?.ref ?? null,
  promotedAt: promotion?.at ?? null
})

const Row = Schema.transform(Stored, Schema.typeSchema(Chat), {
  strict: true,
  decode: ({ promotedAs, promotedRef, promotedAt, ...rest }) => ({
    ...rest,
    promotion: promotedAs !== null && promotedRef !== null && promotedAt !== null ? { as: promotedAs, ref: promotedRef, at: promotedAt } : null
  }),
  encode: stored
})

const MessageRow = Schema.typeSchema(ChatMessage)

export interface ChatFilter extends PageQuery {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

export class ChatsRepo extends Effect.Service<ChatsRepo>()("ChatsRepo", {
  effect: Effect.map(makeLabTable({ table: "chats", row: Row, columns: stored }), (table) => {
    const sql = table.sql
    const messages = SqlSchema.findAll({
      Request: Schema.String,
      Result: MessageRow,
      execute: (chatId) =>
        sql`SELECT id, chat_id, seq, role, content, created_at FROM chat_messages WHERE chat_id = ${chatId} ORDER BY seq`
    })
    return {
      find: table.find,
      findForUpdate: table.findForUpdate,
      insert: (chat: Chat) => Effect.orDie(table.insert(chat)),
      update: (chat: Chat) => Effect.orDie(table.update(chat)),
      list: table.listBy((where, filter: ChatFilter) => [where.created(filter)]),
      messages: (chatId: ChatId): Effect.Effect<ReadonlyArray<ChatMessage>> => Effect.orDie(messages(chatId)),
      insertMessage: (labId: LabId, message: ChatMessage) =>
        Effect.orDie(sql`INSERT INTO chat_messages ${sql.insert({ ...message, labId })}`)
    }
  })
}) {}
