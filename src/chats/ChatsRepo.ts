import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { type Chat, ChatMessage, PromotionKind } from "./Chat.js"

const Date_ = Schema.typeSchema(Timestamp)

const Row = Schema.Struct({
  id: Schema.String,
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
type Row = typeof Row.Type

const toChat = ({ promotedAs, promotedRef, promotedAt, ...rest }: Row): Chat => ({
  ...rest,
  promotion: promotedAs !== null && promotedRef !== null && promotedAt !== null ? { as: promotedAs, ref: promotedRef, at: promotedAt } : null
})

const MessageRow = Schema.typeSchema(ChatMessage)
const Key = Schema.Struct({ labId: Schema.String, id: Schema.String })

export interface ChatFilter extends PageQuery {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class ChatsRepo extends Effect.Service<ChatsRepo>()("ChatsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const when = <A>(value: A | undefined, f: (a: A) => Fragment): Fragment => (value === undefined ? sql`TRUE` : f(value))

    const list = (labId: string, filter: ChatFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM chats
          WHERE lab_id = ${labId}
            AND ${when(filter.from, (d) => sql`created_at >= ${d}`)}
            AND ${when(filter.to, (d) => sql`created_at < ${d}`)}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf((yield* decodeRows(rows)).map(toChat), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT * FROM chats WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findForUpdate = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT * FROM chats WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const messages = SqlSchema.findAll({
      Request: Schema.String,
      Result: MessageRow,
      execute: (chatId) =>
        sql`SELECT id, chat_id, seq, role, content, created_at FROM chat_messages WHERE chat_id = ${chatId} ORDER BY seq`
    })

    return {
      list: (labId: string, filter: ChatFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string): Effect.Effect<Option.Option<Chat>> =>
        Effect.orDie(Effect.map(find({ labId, id }), Option.map(toChat))),
      findForUpdate: (labId: string, id: string): Effect.Effect<Option.Option<Chat>> =>
        Effect.orDie(Effect.map(findForUpdate({ labId, id }), Option.map(toChat))),
      messages: (chatId: string): Effect.Effect<ReadonlyArray<ChatMessage>> => Effect.orDie(messages(chatId)),
      insert: (chat: Chat) => {
        const { promotion, ...rest } = chat
        return Effect.orDie(
          sql`INSERT INTO chats ${sql.insert({
            ...rest,
            promotedAs: promotion?.as ?? null,
            promotedRef: promotion?.ref ?? null,
            promotedAt: promotion?.at ?? null
          })}`
        )
      },
      update: (chat: Chat) =>
        Effect.orDie(
          sql`UPDATE chats SET ${sql.update({
            title: chat.title,
            outcome: chat.outcome,
            promotedAs: chat.promotion?.as ?? null,
            promotedRef: chat.promotion?.ref ?? null,
            promotedAt: chat.promotion?.at ?? null,
            messageCount: chat.messageCount,
            updatedAt: chat.updatedAt
          })} WHERE id = ${chat.id} AND lab_id = ${chat.labId}`
        ),
      insertMessage: (labId: string, message: ChatMessage) =>
        Effect.orDie(sql`INSERT INTO chat_messages ${sql.insert({ ...message, labId })}`)
    }
  })
}) {}
