import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { type CostCategory } from "../costs/Money.js"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { ExperimentCost } from "./Experiment.js"

export interface CostFilter {
  readonly experimentId?: string | undefined
  readonly category?: CostCategory | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const Sums = {
  currency: Schema.String,
  category: Schema.Literal("compute", "api", "storage"),
  amount: Schema.Number,
  count: Schema.Number
}
const decodeTotals = Schema.decodeUnknown(Schema.Array(Schema.Struct(Sums)))
const decodeDays = Schema.decodeUnknown(Schema.Array(Schema.Struct({ day: Schema.String, ...Sums })))

/** The filter's conditions, incurred time included. */
const conditions = (sql: SqlClient.SqlClient, f: CostFilter) => [
  f.experimentId === undefined ? sql`TRUE` : sql`experiment_id = ${f.experimentId}`,
  f.category === undefined ? sql`TRUE` : sql`category = ${f.category}`,
  f.from ? sql`incurred_at >= ${f.from}` : sql`TRUE`,
  f.to ? sql`incurred_at < ${f.to}` : sql`TRUE`
]

/** Sums of every record the filter selects (all pages), per currency and category. */
const totals = (sql: SqlClient.SqlClient, labId: LabId, f: CostFilter) =>
  Effect.flatMap(
    sql`
      SELECT currency, category, SUM(amount)::float8 AS amount, COUNT(*)::int AS count
      FROM experiment_costs WHERE lab_id = ${labId} AND ${sql.and(conditions(sql, f))}
      GROUP BY currency, category`,
    decodeTotals
  ).pipe(Effect.orDie)

/**
 * Sums per UTC day, currency and category of the records a client posted (origin manual) incurred in [from, to).
 * Records the service derives from pod runtime are left out: pod uptime is counted from the sessions.
 */
const manualByDay = (sql: SqlClient.SqlClient, labId: LabId, from: Date, to: Date) =>
  Effect.flatMap(
    sql`
      SELECT to_char(incurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency, category,
             SUM(amount)::float8 AS amount, COUNT(*)::int AS count
      FROM experiment_costs
      WHERE lab_id = ${labId} AND origin = 'manual' AND incurred_at >= ${from} AND incurred_at < ${to}
      GROUP BY 1, currency, category`,
    decodeDays
  ).pipe(Effect.orDie)

/** Experiment cost records. */
export class CostsRepo extends Effect.Service<CostsRepo>()("ExperimentCostsRepo", {
  effect: Effect.map(
    makeLabTable({ table: "experiment_costs", row: Schema.typeSchema(ExperimentCost), columns: (cost: ExperimentCost) => cost }),
    (table) => ({
      list: (labId: LabId, f: CostFilter & PageQuery) => table.page(labId, () => conditions(table.sql, f), f),
      totals: (labId: LabId, f: CostFilter) => totals(table.sql, labId, f),
      manualByDay: (labId: LabId, from: Date, to: Date) => manualByDay(table.sql, labId, from, to),
      insert: (cost: ExperimentCost) => Effect.orDie(table.insert(cost))
    })
  )
}) {}
