import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { type CostCategory } from "../costs/Money.js"
import { ExperimentCost } from "./Experiment.js"

const Rows = Schema.Array(Schema.typeSchema(ExperimentCost))

export interface CostFilter {
  readonly experimentId?: string | undefined
  readonly category?: CostCategory | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const TotalRow = Schema.Struct({
  currency: Schema.String,
  category: Schema.Literal("compute", "api", "storage"),
  amount: Schema.Number,
  count: Schema.Number
})
const TotalRows = Schema.Array(TotalRow)

const DayRow = Schema.Struct({
  day: Schema.String,
  currency: Schema.String,
  category: Schema.Literal("compute", "api", "storage"),
  amount: Schema.Number,
  count: Schema.Number
})
const DayRows = Schema.Array(DayRow)

/** Experiment cost records. */
export class CostsRepo extends Effect.Service<CostsRepo>()("ExperimentCostsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const where = (labId: string, f: CostFilter) => sql`
      lab_id = ${labId}
      AND ${f.experimentId === undefined ? sql`TRUE` : sql`experiment_id = ${f.experimentId}`}
      AND ${f.category === undefined ? sql`TRUE` : sql`category = ${f.category}`}
      AND ${f.from ? sql`incurred_at >= ${f.from}` : sql`TRUE`}
      AND ${f.to ? sql`incurred_at < ${f.to}` : sql`TRUE`}`

    const list = (labId: string, f: CostFilter & PageQuery) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM experiment_costs
          WHERE ${where(labId, f)} AND ${keyset(sql, f.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${f.limit + 1}`
        return pageOf(yield* Schema.decodeUnknown(Rows)(rows), f.limit)
      }).pipe(Effect.orDie)

    /** Sums of every record the filter selects (all pages), per currency and category. */
    const totals = (labId: string, f: CostFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT currency, category, SUM(amount)::float8 AS amount, COUNT(*)::int AS count
          FROM experiment_costs WHERE ${where(labId, f)}
          GROUP BY currency, category`
        return yield* Schema.decodeUnknown(TotalRows)(rows)
      }).pipe(Effect.orDie)

    /**
     * Sums per UTC day, currency and category of the records a client posted
     * (origin manual) incurred in [from, to). Records the service derives from
     * pod runtime are left out: pod uptime is counted from the sessions.
     */
    const manualByDay = (labId: string, from: Date, to: Date) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT to_char(incurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency, category,
                 SUM(amount)::float8 AS amount, COUNT(*)::int AS count
          FROM experiment_costs
          WHERE lab_id = ${labId} AND origin = 'manual' AND incurred_at >= ${from} AND incurred_at < ${to}
          GROUP BY 1, currency, category`
        return yield* Schema.decodeUnknown(DayRows)(rows)
      }).pipe(Effect.orDie)

    const insert = (cost: ExperimentCost) => Effect.orDie(sql`INSERT INTO experiment_costs ${sql.insert(cost)}`)

    return { list, totals, manualByDay, insert }
  })
}) {}
