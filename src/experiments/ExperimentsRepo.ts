import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { cursorFromString, keyset, pageOf, type PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { Experiment, type ExperimentRecord, type ExperimentStatus, MetricPoint } from "./Experiment.js"

const decode = Schema.decodeUnknown(Schema.Array(Schema.typeSchema(Experiment)))

export interface ExperimentFilter extends PageQuery {
  readonly status?: ExperimentStatus | undefined
  readonly queueId?: string | undefined
  readonly podId?: string | undefined
  readonly templateId?: string | undefined
  readonly projectId?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

/** Metric points are listed in the order they were appended; the cursor is the last position seen. */
export const MetricCursor = cursorFromString(Schema.Struct({ seq: Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER)) }))

export interface MetricPage {
  readonly limit: number
  readonly cursor: Option.Option<{ readonly seq: number }>
}

const decodeMetricRows = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...MetricPoint.fields, seq: Schema.Number }).pipe(Schema.typeSchema)))

export interface NewPoint {
  readonly key: string
  readonly value: number
  readonly step: number | null
  readonly timestamp: Date
}

/** Experiments with their cost: the sum of their cost records per currency. */
const select = (sql: SqlClient.SqlClient) => sql`
  SELECT e.id, e.lab_id, e.name, e.description, e.hypothesis, e.params, e.status, e.status_message,
         e.template_id, e.queue_id, e.pod_id, e.project_id,
         e.created_at, e.updated_at, e.queued_at, e.started_at, e.finished_at,
         COALESCE(c.cost, '{}'::jsonb) AS cost
  FROM experiments e
  LEFT JOIN LATERAL (
    SELECT jsonb_object_agg(t.currency, t.total) AS cost
    FROM (
      SELECT currency, ROUND(SUM(amount)::numeric, 6)::float8 AS total
      FROM experiment_costs WHERE experiment_id = e.id GROUP BY currency
    ) t
  ) c ON TRUE`

const list = (sql: SqlClient.SqlClient, labId: LabId, f: ExperimentFilter) => {
  const eq = (column: string, value: string | undefined) => (value === undefined ? sql`TRUE` : sql`${sql(column)} = ${value}`)
  return Effect.gen(function* () {
    const rows = yield* sql`
      ${select(sql)}
      WHERE e.lab_id = ${labId}
        AND ${eq("e.status", f.status)} AND ${eq("e.queue_id", f.queueId)} AND ${eq("e.pod_id", f.podId)}
        AND ${eq("e.template_id", f.templateId)} AND ${eq("e.project_id", f.projectId)}
        AND ${f.from ? sql`e.created_at >= ${f.from}` : sql`TRUE`}
        AND ${f.to ? sql`e.created_at < ${f.to}` : sql`TRUE`}
        AND ${keyset(sql, f.cursor, "e")}
      ORDER BY e.created_at DESC, e.id DESC
      LIMIT ${f.limit + 1}`
    return pageOf(yield* decode(rows), f.limit)
  }).pipe(Effect.orDie)
}

const find = (sql: SqlClient.SqlClient, labId: LabId, id: string): Effect.Effect<Option.Option<Experiment>> =>
  Effect.gen(function* () {
    const rows = yield* sql`${select(sql)} WHERE e.id = ${id} AND e.lab_id = ${labId}`
    return Option.fromNullable((yield* decode(rows))[0])
  }).pipe(Effect.orDie)

/** Set columns; `from` guards the status the row must still have. True when it changed. */
const update = (sql: SqlClient.SqlClient, id: string, change: Partial<ExperimentRecord>, from?: ReadonlyArray<ExperimentStatus>) => {
  const set: Record<string, unknown> = { updatedAt: new Date() }
  for (const [key, value] of Object.entries(change)) {
    if (value !== undefined) set[key] = key === "params" ? JSON.stringify(value) : value
  }
  return Effect.map(
    Effect.orDie(sql`
      UPDATE experiments SET ${sql.update(set)}
      WHERE id = ${id} AND ${from ? sql`status IN ${sql.in(from)}` : sql`TRUE`}
      RETURNING id`),
    (rows) => rows.length > 0
  )
}

const appendMetrics = (sql: SqlClient.SqlClient, labId: LabId, experimentId: string, points: ReadonlyArray<NewPoint>) => {
  const createdAt = new Date()
  const rows = points.map((p) => ({
    labId,
    experimentId,
    key: p.key,
    value: p.value,
    step: p.step,
    measuredAt: p.timestamp,
    createdAt
  }))
  return Effect.orDie(sql`INSERT INTO experiment_metrics ${sql.insert(rows)}`).pipe(
    Effect.as(points.map((p): MetricPoint => ({ experimentId, ...p, createdAt })))
  )
}

const listMetrics = (sql: SqlClient.SqlClient, experimentId: string, key: string | undefined, page: MetricPage) =>
  Effect.gen(function* () {
    const rows = yield* sql`
      SELECT seq::float8 AS seq, experiment_id, key, value, step::float8 AS step, measured_at AS "timestamp", created_at
      FROM experiment_metrics
      WHERE experiment_id = ${experimentId}
        AND ${key === undefined ? sql`TRUE` : sql`key = ${key}`}
        AND ${Option.match(page.cursor, { onNone: () => sql`TRUE`, onSome: (c) => sql`seq > ${c.seq}` })}
      ORDER BY seq
      LIMIT ${page.limit + 1}`
    const decoded = yield* decodeMetricRows(rows)
    const items = decoded.slice(0, page.limit)
    const last = items.at(-1)
    return {
      items: items.map(({ seq: _seq, ...point }): MetricPoint => point),
      next: decoded.length > page.limit && last ? Option.some({ seq: last.seq }) : Option.none()
    }
  }).pipe(Effect.orDie)

export class ExperimentsRepo extends Effect.Service<ExperimentsRepo>()("ExperimentsRepo", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    list: (labId: LabId, filter: ExperimentFilter) => list(sql, labId, filter),
    find: (labId: LabId, id: string) => find(sql, labId, id),
    /** Find and lock the row for the rest of the transaction. */
    findForUpdate: (labId: LabId, id: string) =>
      Effect.flatMap(
        Effect.orDie(sql`SELECT id FROM experiments WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`),
        (rows) => (rows.length === 0 ? Effect.succeed(Option.none<Experiment>()) : find(sql, labId, id))
      ),
    insert: (e: ExperimentRecord) => Effect.orDie(sql`INSERT INTO experiments ${sql.insert({ ...e, params: JSON.stringify(e.params) })}`),
    update: (id: string, change: Partial<ExperimentRecord>, from?: ReadonlyArray<ExperimentStatus>) => update(sql, id, change, from),
    /** Running experiments on a pod (at most one, by the unique index). */
    runningOn: (podId: string) =>
      Effect.orDie(Effect.flatMap(sql`${select(sql)} WHERE e.pod_id = ${podId} AND e.status = 'running'`, decode)),
    /** Labs that have queued experiments. */
    labsWithQueued: Effect.map(
      Effect.orDie(sql<{ readonly labId: string }>`SELECT DISTINCT lab_id FROM experiments WHERE status = 'queued'`),
      (rows) => rows.map((r) => r.labId)
    ),
    /** The next `n` queued experiments of a lab, first queued first. */
    nextQueued: (labId: LabId, n: number) =>
      Effect.orDie(
        Effect.flatMap(
          sql`${select(sql)} WHERE e.lab_id = ${labId} AND e.status = 'queued' ORDER BY e.queued_at, e.id LIMIT ${n}`,
          decode
        )
      ),
    appendMetrics: (labId: LabId, experimentId: string, points: ReadonlyArray<NewPoint>) => appendMetrics(sql, labId, experimentId, points),
    listMetrics: (experimentId: string, key: string | undefined, page: MetricPage) => listMetrics(sql, experimentId, key, page)
  }))
}) {}
