import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { migrations } from "./Migrations.js"

/** Arbitrary constant: the advisory lock that serialises concurrent starts. */
const MIGRATION_LOCK = 7_341_002

/** Apply every migration not applied yet, in one transaction under an advisory lock. */
export const runMigrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
      yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
      const applied = yield* sql<{ id: number }>`SELECT id FROM schema_migrations`
      const done = new Set(applied.map((row) => row.id))
      for (const migration of migrations) {
        if (done.has(migration.id)) continue
        if (migration.sql.trim() !== "") yield* sql.unsafe(migration.sql)
        yield* sql`INSERT INTO schema_migrations (id, name) VALUES (${migration.id}, ${migration.name})`
        yield* Effect.logInfo(`applied migration ${migration.id} ${migration.name}`)
      }
    })
  )
})
