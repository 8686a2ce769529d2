import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Run `effect` in one transaction of `sql`; a database error is a defect (the caller's own failures stay typed).
 * The one copy of what each service wrote as `.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))`.
 */
export const inTransaction =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
