import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { Template } from "./Experiment.js"

const Rows = Schema.Array(Schema.typeSchema(Template))

export class TemplatesRepo extends Effect.Service<TemplatesRepo>()("TemplatesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = (labId: string, page: PageQuery) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM experiment_templates
          WHERE lab_id = ${labId} AND ${keyset(sql, page.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${page.limit + 1}`
        return pageOf(yield* Schema.decodeUnknown(Rows)(rows), page.limit)
      }).pipe(Effect.orDie)

    const find = (labId: string, id: string): Effect.Effect<Option.Option<Template>> =>
      Effect.gen(function* () {
        const rows = yield* sql`SELECT * FROM experiment_templates WHERE id = ${id} AND lab_id = ${labId}`
        return Option.fromNullable((yield* Schema.decodeUnknown(Rows)(rows))[0])
      }).pipe(Effect.orDie)

    const insert = (t: Template) =>
      Effect.orDie(
        sql`INSERT INTO experiment_templates ${sql.insert({
          ...t,
          paramsSchema: JSON.stringify(t.paramsSchema),
          defaults: JSON.stringify(t.defaults)
        })}`
      )

    return { list, find, insert }
  })
}) {}
