import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { AuthorKind, type Standup } from "./Standup.js"

const Row = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  day: Schema.String,
  authorKind: AuthorKind,
  authorId: Schema.String,
  done: Schema.Array(Schema.String),
  planned: Schema.Array(Schema.String),
  blockers: Schema.Array(Schema.String),
  createdAt: Schema.typeSchema(Timestamp)
})
type Row = typeof Row.Type

const toStandup = ({ day, authorKind, authorId, ...rest }: Row): Standup => ({
  ...rest,
  date: day,
  author: { kind: authorKind, id: authorId }
})

export interface StandupFilter extends PageQuery {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly authorKind?: AuthorKind | undefined
  readonly authorId?: string | undefined
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class StandupsRepo extends Effect.Service<StandupsRepo>()("StandupsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const when = <A>(value: A | undefined, f: (a: A) => Fragment): Fragment => (value === undefined ? sql`TRUE` : f(value))

    const list = (labId: string, filter: StandupFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM standups
          WHERE lab_id = ${labId}
            AND ${when(filter.from, (d) => sql`day >= ${d}`)}
            AND ${when(filter.to, (d) => sql`day < ${d}`)}
            AND ${when(filter.authorKind, (k) => sql`author_kind = ${k}`)}
            AND ${when(filter.authorId, (a) => sql`author_id = ${a}`)}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf((yield* decodeRows(rows)).map(toStandup), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT * FROM standups WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findByAuthor = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, kind: AuthorKind, authorId: Schema.String, day: Schema.String }),
      Result: Row,
      execute: ({ labId, kind, authorId, day }) =>
        sql`SELECT * FROM standups WHERE lab_id = ${labId} AND author_kind = ${kind} AND author_id = ${authorId} AND day = ${day}`
    })

    return {
      list: (labId: string, filter: StandupFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string): Effect.Effect<Option.Option<Standup>> =>
        Effect.orDie(Effect.map(find({ labId, id }), Option.map(toStandup))),
      findByAuthor: (labId: string, author: Standup["author"], day: string): Effect.Effect<Option.Option<Standup>> =>
        Effect.orDie(Effect.map(findByAuthor({ labId, kind: author.kind, authorId: author.id, day }), Option.map(toStandup))),
      /** Fails with the SqlError of a unique violation when the author has a standup that day. */
      insert: (s: Standup) =>
        sql`INSERT INTO standups ${sql.insert({
          id: s.id,
          labId: s.labId,
          day: s.date,
          authorKind: s.author.kind,
          authorId: s.author.id,
          done: JSON.stringify(s.done),
          planned: JSON.stringify(s.planned),
          blockers: JSON.stringify(s.blockers),
          createdAt: s.createdAt
        })}`
    }
  })
}) {}
