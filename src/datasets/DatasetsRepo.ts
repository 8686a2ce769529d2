import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import type { Dataset } from "./Dataset.js"

/** A row of `datasets`; the row count is stored as row_count (ROWS is an SQL keyword). */
const Row = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  uri: Schema.NullOr(Schema.String),
  path: Schema.NullOr(Schema.String),
  format: Schema.String,
  sizeBytes: Schema.NullOr(Schema.Number),
  rowCount: Schema.NullOr(Schema.Number),
  version: Schema.Number,
  tags: Schema.Array(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
type Row = typeof Row.Type

const toDataset = ({ rowCount, ...row }: Row): Dataset => ({ ...row, rows: rowCount })
const columns = ({ rows, tags, ...dataset }: Dataset) => ({ ...dataset, rowCount: rows, tags: JSON.stringify(tags) })

export interface DatasetFilter extends PageQuery {
  readonly format: Option.Option<string>
  readonly tag: Option.Option<string>
  readonly from: Option.Option<Date>
  readonly to: Option.Option<Date>
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class DatasetsRepo extends Effect.Service<DatasetsRepo>()("DatasetsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = (labId: string, filter: DatasetFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM datasets
          WHERE lab_id = ${labId}
            AND ${Option.match(filter.format, { onNone: () => sql`TRUE`, onSome: (f) => sql`format = ${f}` })}
            AND ${Option.match(filter.tag, { onNone: () => sql`TRUE`, onSome: (t) => sql`tags @> ${JSON.stringify([t])}::jsonb` })}
            AND ${Option.match(filter.from, { onNone: () => sql`TRUE`, onSome: (d) => sql`created_at >= ${d}` })}
            AND ${Option.match(filter.to, { onNone: () => sql`TRUE`, onSome: (d) => sql`created_at < ${d}` })}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf((yield* decodeRows(rows)).map(toDataset), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`SELECT * FROM datasets WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findForUpdate = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`SELECT * FROM datasets WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const save = (dataset: Dataset) => {
      const { id, labId, createdAt: _createdAt, ...rest } = columns(dataset)
      return sql`UPDATE datasets SET ${sql.update(rest)} WHERE id = ${id} AND lab_id = ${labId}`
    }

    return {
      list: (labId: string, filter: DatasetFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string) => Effect.orDie(Effect.map(find({ labId, id }), Option.map(toDataset))),
      findForUpdate: (labId: string, id: string) => Effect.orDie(Effect.map(findForUpdate({ labId, id }), Option.map(toDataset))),
      /** Fails with the SqlError of a unique violation when the name is taken. */
      insert: (dataset: Dataset) => sql`INSERT INTO datasets ${sql.insert(columns(dataset))}`,
      /** Fails with the SqlError of a unique violation when a new name is taken. */
      save,
      delete: (labId: string, id: string) => Effect.orDie(sql`DELETE FROM datasets WHERE id = ${id} AND lab_id = ${labId}`)
    }
  })
}) {}
