import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { KnowledgeEntry } from "./Knowledge.js"

const Row = Schema.typeSchema(KnowledgeEntry)
const Key = Schema.Struct({ labId: Schema.String, id: Schema.String })

export interface KnowledgeFilter extends PageQuery {
  readonly tag?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

/** Columns of the resource (the search feature may add its own to the table). */
const COLUMNS = "id, lab_id, title, body, sources, tags, created_at, updated_at"

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class KnowledgeRepo extends Effect.Service<KnowledgeRepo>()("KnowledgeRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)
    const when = <A>(value: A | undefined, f: (a: A) => Fragment): Fragment => (value === undefined ? sql`TRUE` : f(value))

    const list = (labId: string, filter: KnowledgeFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT ${columns} FROM knowledge
          WHERE lab_id = ${labId}
            AND ${when(filter.tag, (t) => sql`tags @> ${JSON.stringify([t])}::jsonb`)}
            AND ${when(filter.from, (d) => sql`created_at >= ${d}`)}
            AND ${when(filter.to, (d) => sql`created_at < ${d}`)}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf(yield* decodeRows(rows), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT ${columns} FROM knowledge WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findForUpdate = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT ${columns} FROM knowledge WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const deleteOne = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`DELETE FROM knowledge WHERE id = ${id} AND lab_id = ${labId} RETURNING ${columns}`
    })

    const row = (entry: KnowledgeEntry) => ({ ...entry, sources: JSON.stringify(entry.sources), tags: JSON.stringify(entry.tags) })

    return {
      list: (labId: string, filter: KnowledgeFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string): Effect.Effect<Option.Option<KnowledgeEntry>> => Effect.orDie(find({ labId, id })),
      findForUpdate: (labId: string, id: string): Effect.Effect<Option.Option<KnowledgeEntry>> =>
        Effect.orDie(findForUpdate({ labId, id })),
      insert: (entry: KnowledgeEntry) => Effect.orDie(sql`INSERT INTO knowledge ${sql.insert(row(entry))}`),
      update: (entry: KnowledgeEntry) => {
        const { id, labId, createdAt: _, ...fields } = row(entry)
        return Effect.orDie(sql`UPDATE knowledge SET ${sql.update(fields)} WHERE id = ${id} AND lab_id = ${labId}`)
      },
      delete: (labId: string, id: string): Effect.Effect<Option.Option<KnowledgeEntry>> => Effect.orDie(deleteOne({ labId, id }))
    }
  })
}) {}
