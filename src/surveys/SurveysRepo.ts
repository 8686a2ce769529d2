import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { Survey, type SurveyStatus } from "./Survey.js"

const Row = Schema.typeSchema(Survey)
const Key = Schema.Struct({ labId: Schema.String, id: Schema.String })

export interface SurveyFilter extends PageQuery {
  readonly status?: SurveyStatus | undefined
  readonly tag?: string | undefined
  readonly paperId?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class SurveysRepo extends Effect.Service<SurveysRepo>()("SurveysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const when = <A>(value: A | undefined, f: (a: A) => Fragment): Fragment => (value === undefined ? sql`TRUE` : f(value))

    const list = (labId: string, filter: SurveyFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM surveys
          WHERE lab_id = ${labId}
            AND ${when(filter.status, (s) => sql`status = ${s}`)}
            AND ${when(filter.tag, (t) => sql`tags @> ${JSON.stringify([t])}::jsonb`)}
            AND ${when(filter.paperId, (p) => sql`linked_paper_ids @> ${JSON.stringify([p])}::jsonb`)}
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
      execute: ({ labId, id }) => sql`SELECT * FROM surveys WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findForUpdate = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT * FROM surveys WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const deleteOne = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`DELETE FROM surveys WHERE id = ${id} AND lab_id = ${labId} RETURNING *`
    })

    const row = (s: Survey) => ({ ...s, linkedPaperIds: JSON.stringify(s.linkedPaperIds), tags: JSON.stringify(s.tags) })

    return {
      list: (labId: string, filter: SurveyFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string): Effect.Effect<Option.Option<Survey>> => Effect.orDie(find({ labId, id })),
      findForUpdate: (labId: string, id: string): Effect.Effect<Option.Option<Survey>> => Effect.orDie(findForUpdate({ labId, id })),
      insert: (survey: Survey) => Effect.orDie(sql`INSERT INTO surveys ${sql.insert(row(survey))}`),
      update: (survey: Survey) => {
        const { id, labId, createdAt: _, ...fields } = row(survey)
        return Effect.orDie(sql`UPDATE surveys SET ${sql.update(fields)} WHERE id = ${id} AND lab_id = ${labId}`)
      },
      delete: (labId: string, id: string): Effect.Effect<Option.Option<Survey>> => Effect.orDie(deleteOne({ labId, id }))
    }
  })
}) {}
