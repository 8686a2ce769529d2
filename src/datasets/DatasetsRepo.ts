import { Effect, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import { Dataset } from "./Dataset.js"

const { rows: _rows, ...stored } = Dataset.fields

/** A row of `datasets`: the row count is stored as row_count (ROWS is an SQL keyword). */
const Row = Schema.transform(Schema.typeSchema(Schema.Struct({ ...stored, rowCount: Schema.NullOr(Schema.Number) })), Schema.typeSchema(Dataset), {
  strict: true,
  decode: ({ rowCount, ...row }) => ({ ...row, rows: rowCount }),
  encode: ({ rows, ...dataset }) => ({ ...dataset, rowCount: rows })
})

const columns = ({ rows, tags, ...dataset }: Dataset) => ({ ...dataset, rowCount: rows, tags: JSON.stringify(tags) })

export interface DatasetFilter extends PageQuery {
  readonly format?: string | undefined
  readonly tag?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

/** `insert` and `update` fail with the SqlError of a unique violation when the name is taken. */
export class DatasetsRepo extends Effect.Service<DatasetsRepo>()("DatasetsRepo", {
  effect: Effect.map(makeLabTable({ table: "datasets", row: Row, columns }), (table) => ({
    ...table,
    list: table.listBy((where, filter: DatasetFilter) => [
      where.eq("format", filter.format),
      where.hasTag("tags", filter.tag),
      where.created(filter)
    ])
  }))
}) {}
