import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { MemoryEntry, type MemoryKind } from "./Memory.js"

const Row = Schema.typeSchema(MemoryEntry)
const Key = Schema.Struct({ labId: Schema.String, id: Schema.String })

export interface MemoryFilter extends PageQuery {
  readonly agentId?: string | undefined
  readonly kind?: MemoryKind | undefined
  readonly tag?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class MemoryRepo extends Effect.Service<MemoryRepo>()("MemoryRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const when = <A>(value: A | undefined, f: (a: A) => Fragment): Fragment => (value === undefined ? sql`TRUE` : f(value))

    const list = (labId: string, filter: MemoryFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM memory
          WHERE lab_id = ${labId}
            AND ${when(filter.agentId, (a) => sql`agent_id = ${a}`)}
            AND ${when(filter.kind, (k) => sql`kind = ${k}`)}
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
      execute: ({ labId, id }) => sql`SELECT * FROM memory WHERE id = ${id} AND lab_id = ${labId}`
    })

    const deleteOne = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`DELETE FROM memory WHERE id = ${id} AND lab_id = ${labId} RETURNING *`
    })

    return {
      list: (labId: string, filter: MemoryFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string): Effect.Effect<Option.Option<MemoryEntry>> => Effect.orDie(find({ labId, id })),
      insert: (entry: MemoryEntry) =>
        Effect.orDie(sql`INSERT INTO memory ${sql.insert({ ...entry, tags: JSON.stringify(entry.tags) })}`),
      delete: (labId: string, id: string): Effect.Effect<Option.Option<MemoryEntry>> => Effect.orDie(deleteOne({ labId, id }))
    }
  })
}) {}
