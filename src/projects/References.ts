import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** What a project groups, and what a survey links: resources of other features, by id. */
export const RefKind = Schema.Literal("experiment", "paper", "task")
export type RefKind = typeof RefKind.Type

const TABLE: Record<RefKind, string> = { experiment: "experiments", paper: "papers", task: "tasks" }

const Count = Schema.Struct({ n: Schema.Number })
const Id = Schema.Struct({ id: Schema.String })

const decodeCounts = Schema.decodeUnknown(Schema.Array(Count))
const decodeIds = Schema.decodeUnknown(Schema.Array(Id))

/**
 * Existence checks on other features' tables, without a foreign key (features
 * own their tables and may land in any order). A table is checked when it is
 * there with `id` and `lab_id` columns; when it is not (yet), ids are stored as given.
 */
export class References extends Effect.Service<References>()("References", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const present = new Set<string>()

    const checkable = (table: string) =>
      present.has(table)
        ? Effect.succeed(true)
        : Effect.gen(function* () {
            const rows = yield* sql`
              SELECT count(*)::int AS n FROM information_schema.columns
              WHERE table_schema = current_schema() AND table_name = ${table} AND column_name IN ('id', 'lab_id')`
            const [row] = yield* decodeCounts(rows)
            const ok = row !== undefined && row.n === 2
            if (ok) present.add(table)
            return ok
          })

    /** The ids of this kind that are not in the lab; `checked: false` when there is no table to check. */
    const missing = (labId: string, kind: RefKind, ids: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const table = TABLE[kind]
        if (ids.length === 0) return { checked: true, missing: [] }
        if (!(yield* checkable(table))) return { checked: false, missing: [] }
        const rows = yield* sql`SELECT id FROM ${sql(table)} WHERE lab_id = ${labId} AND id IN ${sql.in(ids)}`
        const found = new Set((yield* decodeIds(rows)).map((r) => r.id))
        return { checked: true, missing: [...new Set(ids)].filter((id) => !found.has(id)) }
      }).pipe(Effect.orDie)

    return { missing }
  })
}) {}
