/**
 * Our own runner, not @effect/sql's Migrator (node_modules/@effect/sql/src/Migrator.ts), because with it:
 * - existing databases would re-run everything: it records applied migrations in a table of its own shape
 *   (`migration_id`, `name`, `created_at`; only the table's name is an option), where ours are rows of
 *   `schema_migrations (id, name, applied_at)`; carrying them over would need a step of our own, outside its lock;
 * - two replicas starting on an empty database race: it creates its table outside its transaction, with a plain
 *   `CREATE TABLE` after a failed `select 'table'::regclass`, so the second fails to start; ours creates the table
 *   under the advisory lock, in the migrating transaction;
 * - it applies only ids above the newest recorded one (a migration merged with a lower id is skipped silently) and
 *   records no checksum, and it has no hook to add one, so an applied migration whose text changed goes unnoticed.
 * What it would bring (loading migrations from files, a schema dump) we do not need: the list is Migrations.ts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { type Migration, migrations } from "./Migrations.js"
import { allowingLongStatements } from "./Priority.js"

/** Arbitrary constant: the advisory lock that serialises concurrent starts. */
const MIGRATION_LOCK = 7_341_002

/** What a migration's text is recorded as when applied: its SQL's sha256, in hex. */
export const checksumOf = (migration: Migration): string => createHash("sha256").update(migration.sql).digest("hex")

const Applied = Schema.Array(Schema.Struct({ id: Schema.Number, checksum: Schema.NullOr(Schema.String) }))

/**
 * Apply every migration not applied yet, in one transaction under an advisory lock, recording each one's checksum.
 * An applied migration whose recorded checksum differs from its text in the code is logged as an error (the service
 * still starts: the schema is what was applied, and refusing would take the service down over a comment's edit).
 * Its statements may run for minutes on a big database (migration 14's one UPDATE over search_documents): PGlite's
 * stall watchdog leaves them be, or a start that must migrate could never finish.
 */
export const runMigrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* allowingLongStatements(sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
      yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
      // databases migrated before checksums were recorded have the table without the column
      yield* sql`ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text`
      const applied = yield* Schema.decodeUnknown(Applied)(yield* sql`SELECT id, checksum FROM schema_migrations`)
      const recorded = new Map(applied.map((row) => [row.id, row.checksum]))
      for (const migration of migrations) {
        const checksum = checksumOf(migration)
        if (!recorded.has(migration.id)) {
          if (migration.sql.trim() !== "") yield* sql.unsafe(migration.sql)
          yield* sql`INSERT INTO schema_migrations (id, name, checksum) VALUES (${migration.id}, ${migration.name}, ${checksum})`
          yield* Effect.logInfo(`applied migration ${migration.id} ${migration.name}`)
          continue
        }
        const before = recorded.get(migration.id)
        if (before === null || before === undefined) {
          // applied before checksums were recorded: its text was not kept, so the code's stands for it from now on
          yield* sql`UPDATE schema_migrations SET checksum = ${checksum} WHERE id = ${migration.id}`
        } else if (before !== checksum) {
          yield* Effect.logError(
            `migration ${migration.id} (${migration.name}) differs from the one this database applied ` +
              `(recorded checksum ${before}, the code's ${checksum}): a released migration must never change; ` +
              `restore its text and add a new migration for the change`
          )
        }
      }
    })
  ))
})
