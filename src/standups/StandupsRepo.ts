import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { AuthorKind, Standup, StandupId } from "./Standup.js"

/** A standup as stored: the day and the author in columns of their own. */
const Stored = Schema.Struct({
  id: StandupId,
  labId: Schema.String,
  day: Schema.String,
  authorKind: AuthorKind,
  authorId: Schema.String,
  done: Schema.Array(Schema.String),
  planned: Schema.Array(Schema.String),
  blockers: Schema.Array(Schema.String),
  createdAt: Schema.typeSchema(Timestamp)
})

const Row = Schema.transform(Stored, Schema.typeSchema(Standup), {
  strict: true,
  decode: ({ day, authorKind, authorId, ...rest }) => ({ ...rest, date: day, author: { kind: authorKind, id: authorId } }),
  encode: ({ date, author, ...rest }) => ({ ...rest, day: date, authorKind: author.kind, authorId: author.id })
})

const columns = (s: Standup) => ({
  id: s.id,
  labId: s.labId,
  day: s.date,
  authorKind: s.author.kind,
  authorId: s.author.id,
  done: JSON.stringify(s.done),
  planned: JSON.stringify(s.planned),
  blockers: JSON.stringify(s.blockers),
  createdAt: s.createdAt
})

export interface StandupFilter extends PageQuery {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly authorKind?: AuthorKind | undefined
  readonly authorId?: string | undefined
}

export class StandupsRepo extends Effect.Service<StandupsRepo>()("StandupsRepo", {
  effect: Effect.map(makeLabTable({ table: "standups", row: Row, columns }), (table) => {
    const sql = table.sql
    const findByAuthor = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, kind: AuthorKind, authorId: Schema.String, day: Schema.String }),
      Result: Row,
      execute: ({ labId, kind, authorId, day }) =>
        sql`SELECT * FROM standups WHERE lab_id = ${labId} AND author_kind = ${kind} AND author_id = ${authorId} AND day = ${day}`
    })
    return {
      find: table.find,
      /** Fails with the SqlError of a unique violation when the author has a standup that day. */
      insert: table.insert,
      list: table.listBy((where, filter: StandupFilter) => [
        filter.from === undefined ? sql`TRUE` : sql`day >= ${filter.from}`,
        filter.to === undefined ? sql`TRUE` : sql`day < ${filter.to}`,
        where.eq("author_kind", filter.authorKind),
        where.eq("author_id", filter.authorId)
      ]),
      findByAuthor: (labId: LabId, author: Standup["author"], day: string): Effect.Effect<Option.Option<Standup>> =>
        Effect.orDie(findByAuthor({ labId, kind: author.kind, authorId: author.id, day }))
    }
  })
}) {}
