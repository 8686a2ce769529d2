import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { newId } from "../common/Ids.js"
import { keyset, pageOf, type PageQuery } from "../db/Paging.js"
import { type CreateLab, Lab } from "./Lab.js"

const Row = Schema.typeSchema(Lab)

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class LabsRepo extends Effect.Service<LabsRepo>()("LabsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findByRef = SqlSchema.findOne({
      Request: Schema.String,
      Result: Row,
      execute: (ref) => sql`SELECT * FROM labs WHERE id = ${ref} OR slug = ${ref}`
    })

    const findBySlugs = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Row,
      execute: (slugs) => sql`SELECT * FROM labs WHERE slug IN ${sql.in(slugs)}`
    })

    const list = (query: PageQuery, slugs: ReadonlyArray<string> | "all") =>
      Effect.gen(function* () {
        if (slugs !== "all" && slugs.length === 0) return pageOf<Lab>([], query.limit)
        const rows = yield* sql`
          SELECT * FROM labs
          WHERE ${slugs === "all" ? sql`TRUE` : sql`slug IN ${sql.in(slugs)}`}
            AND ${keyset(sql, query.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${query.limit + 1}`
        return pageOf(yield* decodeRows(rows), query.limit)
      })

    const insert = (input: CreateLab) => {
      const now = new Date()
      const lab: Lab = { id: newId("lab"), ...input, createdAt: now, updatedAt: now }
      return Effect.as(sql`INSERT INTO labs ${sql.insert(lab)}`, lab)
    }

    return {
      findByRef: (ref: string): Effect.Effect<Option.Option<Lab>> => Effect.orDie(findByRef(ref)),
      findBySlugs: (slugs: ReadonlyArray<string>) =>
        slugs.length === 0 ? Effect.succeed<ReadonlyArray<Lab>>([]) : Effect.orDie(findBySlugs(slugs)),
      list: (query: PageQuery, slugs: ReadonlyArray<string> | "all") => Effect.orDie(list(query, slugs)),
      /** Fails with the SqlError of a unique violation when the slug is taken. */
      insert
    }
  })
}) {}

