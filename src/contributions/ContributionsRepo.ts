import { Effect, Option, Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"
import { makeLabTable } from "../db/LabTable.js"
import type { Cursor } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { Contribution, ContributorKind, ContributorSummary } from "./Contribution.js"

const Row = Schema.typeSchema(Contribution)
const SummaryRow = Schema.typeSchema(ContributorSummary)

export interface ContributionFilter {
  readonly contributor: Option.Option<string>
  readonly contributorKind: Option.Option<ContributorKind>
  readonly kind: Option.Option<string>
  readonly ref: Option.Option<string>
  readonly from: Option.Option<Date>
  readonly to: Option.Option<Date>
}

/** A recorded contribution as stored. */
const RecordedRow = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  contributor: Schema.String,
  contributorKind: ContributorKind,
  kind: Schema.String,
  ref: Schema.NullOr(Schema.String),
  summary: Schema.String,
  recordedBy: Schema.String,
  createdAt: Schema.typeSchema(Timestamp)
})
export type RecordedRow = typeof RecordedRow.Type

/** Where a page of the summary starts: after this (count, contributor). */
export interface SummaryCursor {
  readonly count: number
  readonly contributor: string
}

/**
 * Activity kinds of the contributions feature itself: a recorded contribution
 * is listed once, as itself, not again as the activity entry that logged it.
 */
export const OWN_ACTIVITY = "contribution."

/**
 * Who an activity entry is credited to: the agent its data names (memory
 * written for an agent, an agent's standup), else its actor.
 */
const ACTIVITY_CONTRIBUTOR = `coalesce(a.data->>'agentId', a.actor)`

/**
 * The kind of that contributor, by its id's shape: agents (`agent_…`), users
 * (`user_…`), keys (`key_…`, and the operator's `admin`); anything else (`sync`)
 * is the service itself.
 */
const ACTIVITY_KIND = `CASE
  WHEN a.data->>'agentId' IS NOT NULL OR a.actor LIKE 'agent\\_%' THEN 'agent'
  WHEN a.actor LIKE 'user\\_%' THEN 'user'
  WHEN a.actor = 'admin' OR a.actor LIKE 'key\\_%' THEN 'credential'
  ELSE 'system' END`

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
const decodeSummaryRows = Schema.decodeUnknown(Schema.Array(SummaryRow))

export class ContributionsRepo extends Effect.Service<ContributionsRepo>()("ContributionsRepo", {
  effect: Effect.gen(function* () {
    const table = yield* makeLabTable({ table: "contributions", row: RecordedRow, columns: (row: RecordedRow) => ({ ...row }) })
    const sql = table.sql

    /** Both sources as one relation (the columns of Contribution, snake_case), filtered. */
    const all = (labId: LabId, filter: ContributionFilter) => sql`
      SELECT * FROM (
        SELECT a.id, a.lab_id, ${sql.literal(ACTIVITY_CONTRIBUTOR)} AS contributor, ${sql.literal(ACTIVITY_KIND)} AS contributor_kind,
               a.kind, a.ref, a.message AS summary, 'activity' AS source, a.created_at AS at
        FROM activity a
        WHERE a.lab_id = ${labId} AND NOT starts_with(a.kind, ${OWN_ACTIVITY})
        UNION ALL
        SELECT c.id, c.lab_id, c.contributor, c.contributor_kind, c.kind, c.ref, c.summary, 'recorded' AS source, c.created_at AS at
        FROM contributions c
        WHERE c.lab_id = ${labId}
      ) x
      WHERE ${sql.and([
        ...Option.toArray(Option.map(filter.contributor, (c) => sql`x.contributor = ${c}`)),
        ...Option.toArray(Option.map(filter.contributorKind, (k) => sql`x.contributor_kind = ${k}`)),
        ...Option.toArray(
          Option.map(filter.kind, (kind) =>
            kind.includes(".") ? sql`x.kind = ${kind}` : sql`(x.kind = ${kind} OR starts_with(x.kind, ${`${kind}.`}))`
          )
        ),
        ...Option.toArray(Option.map(filter.ref, (r) => sql`x.ref = ${r}`)),
        ...Option.toArray(Option.map(filter.from, (from) => sql`x.at >= ${from.toISOString()}::timestamptz`)),
        ...Option.toArray(Option.map(filter.to, (to) => sql`x.at < ${to.toISOString()}::timestamptz`)),
        sql`TRUE`
      ])}`

    const list = (labId: LabId, filter: ContributionFilter, cursor: Option.Option<Cursor>, limit: number) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM (${all(labId, filter)}) x
          WHERE ${Option.match(cursor, {
            onNone: () => sql`TRUE`,
            onSome: (c) => sql`(x.at, x.id) < (${c.createdAt.toISOString()}::timestamptz, ${c.id})`
          })}
          ORDER BY x.at DESC, x.id DESC
          LIMIT ${limit + 1}`
        return yield* decodeRows(rows)
      })

    const summary = (labId: LabId, filter: ContributionFilter, cursor: Option.Option<SummaryCursor>, limit: number) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          WITH x AS (${all(labId, filter)}),
          per_kind AS (
            SELECT contributor, contributor_kind, kind, count(*)::int AS n, min(at) AS first_at, max(at) AS last_at
            FROM x GROUP BY contributor, contributor_kind, kind
          ),
          per_contributor AS (
            SELECT contributor, contributor_kind, sum(n)::int AS count, jsonb_object_agg(kind, n) AS kinds,
                   min(first_at) AS first_at, max(last_at) AS last_at
            FROM per_kind GROUP BY contributor, contributor_kind
          )
          SELECT * FROM per_contributor
          WHERE ${Option.match(cursor, {
            onNone: () => sql`TRUE`,
            onSome: (c) => sql`(count < ${c.count} OR (count = ${c.count} AND contributor > ${c.contributor}))`
          })}
          ORDER BY count DESC, contributor
          LIMIT ${limit + 1}`
        return yield* decodeSummaryRows(rows)
      })

    return {
      list: (labId: LabId, filter: ContributionFilter, cursor: Option.Option<Cursor>, limit: number) =>
        Effect.orDie(list(labId, filter, cursor, limit)),
      summary: (labId: LabId, filter: ContributionFilter, cursor: Option.Option<SummaryCursor>, limit: number) =>
        Effect.orDie(summary(labId, filter, cursor, limit)),
      insert: (row: RecordedRow) => Effect.orDie(table.insert(row))
    }
  })
}) {}
