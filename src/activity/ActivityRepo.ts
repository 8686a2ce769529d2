import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { newId } from "../common/Ids.js"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { Activity } from "./Activity.js"

const Row = Schema.typeSchema(Activity)

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class ActivityRepo extends Effect.Service<ActivityRepo>()("ActivityRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Record an entry (inside the caller's transaction, when there is one). */
    const record = (entry: Omit<Activity, "id" | "createdAt" | "ref"> & { readonly ref?: string | null }) => {
      const activity: Activity = { id: newId("act"), ...entry, ref: entry.ref ?? null, createdAt: new Date() }
      return Effect.as(
        Effect.orDie(sql`INSERT INTO activity ${sql.insert({ ...activity, data: JSON.stringify(activity.data) })}`),
        activity
      )
    }

    const list = (labId: string, query: PageQuery) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM activity WHERE lab_id = ${labId} AND ${keyset(sql, query.cursor)}
          ORDER BY created_at DESC, id DESC LIMIT ${query.limit + 1}`
        return pageOf(yield* decodeRows(rows), query.limit)
      }).pipe(Effect.orDie)

    return { record, list }
  })
}) {}
