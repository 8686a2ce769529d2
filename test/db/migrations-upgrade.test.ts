/**
 * A database migrated before checksums were recorded (schema_migrations without its checksum column, all ten
 * migrations applied) upgrades at the next start without re-running anything or losing a row; an applied migration
 * whose text changed since is logged as an error naming it. On PGlite always, on PostgreSQL too when DATABASE_URL is set.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as PgDatabase from "../../layers/PgDatabase.js"
import * as PgliteClient from "../../layers/PgliteClient.js"
import { migrations } from "../../src/db/Migrations.js"
import { checksumOf, runMigrations } from "../../src/db/Migrator.js"
import { postgresInFreshSchema } from "../support/PostgresSchema.js"

/** What the runner did before it recorded checksums (src/db/Migrator.ts up to migration 10), statement for statement. */
const migrateAsBeforeChecksums = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
      for (const migration of migrations) {
        yield* sql.unsafe(migration.sql)
        yield* sql`INSERT INTO schema_migrations (id, name) VALUES (${migration.id}, ${migration.name})`
      }
    })
  )
})

const writeSomeData = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    INSERT INTO labs VALUES ('lab_1', 'one', 'One', 'team', now(), now());
    INSERT INTO files VALUES ('lab_1', '/notes/a.md', 'warmup notes', 12, 'sha', 'api', false, now(), now());
    INSERT INTO tasks VALUES ('task_1', 'lab_1', 'Tune the warmup', '', 'todo', now(), now());
    INSERT INTO memory (id, lab_id, agent_id, kind, content, importance, created_at)
      VALUES ('mem_1', 'lab_1', 'agent_1', 'fact', 'cosine decay works', 0.5, now());`)
})

const Applied = Schema.Array(Schema.Struct({ id: Schema.Number, name: Schema.String, applied: Schema.String }))
const appliedRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(sql`SELECT id, name, applied_at::text AS applied FROM schema_migrations ORDER BY id`, Schema.decodeUnknown(Applied))
)
const Checksums = Schema.Array(Schema.Struct({ id: Schema.Number, checksum: Schema.NullOr(Schema.String) }))
const recordedChecksums = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(sql`SELECT id, checksum FROM schema_migrations ORDER BY id`, Schema.decodeUnknown(Checksums))
)
const Contents = Schema.Array(Schema.Struct({ what: Schema.String, rows: Schema.String }))
/** The rows a user would miss, as text: the lab, its file, task and memory, its usage counters, its search documents. */
const contents = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(
    sql`SELECT 'labs' AS what, (SELECT string_agg(slug || ':' || plan, ',') FROM labs) AS rows
        UNION ALL SELECT 'files', (SELECT string_agg(path || ':' || content, ',') FROM files)
        UNION ALL SELECT 'tasks', (SELECT string_agg(title, ',') FROM tasks)
        UNION ALL SELECT 'memory', (SELECT string_agg(content, ',') FROM memory)
        UNION ALL SELECT 'usage', (SELECT string_agg(file_bytes || '/' || records, ',') FROM lab_usage)
        UNION ALL SELECT 'search', (SELECT string_agg(kind || ':' || ref, ',' ORDER BY kind, ref) FROM search_documents)`,
    Schema.decodeUnknown(Contents)
  )
)

/** Run the migrations, keeping what they log. */
const migrateLogging = Effect.gen(function* () {
  const lines: Array<{ readonly level: string; readonly message: string }> = []
  const keep = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel.label, message: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
  })
  yield* runMigrations.pipe(Effect.provide(Logger.add(keep)))
  return lines
})

const upgradeContract = (backend: string, database: () => Layer.Layer<SqlClient.SqlClient, unknown>) =>
  describe(`migrations on ${backend}`, () => {
    /** Each test on a database of its own, since each starts from an empty or an old schema. */
    const onFreshDatabase = (name: string, test: Effect.Effect<void, unknown, SqlClient.SqlClient>) =>
      it.effect(name, () => test.pipe(Effect.provide(database())), 60_000)

    onFreshDatabase(
      "a database migrated before checksums upgrades: nothing re-runs, every row stays, each migration gets its checksum",
      Effect.gen(function* () {
        yield* migrateAsBeforeChecksums
        yield* writeSomeData
        const before = yield* appliedRows
        const data = yield* contents
        expect(data.find((c) => c.what === "usage")?.rows).toBe("12/3")

        const logged = yield* migrateLogging
        expect(logged).toEqual([])
        const after = yield* appliedRows
        expect(after).toEqual(before)
        expect((yield* recordedChecksums).map((row) => row.checksum)).toEqual(migrations.map(checksumOf))
        expect(yield* contents).toEqual(data)

        // and the next start finds nothing to do
        expect(yield* migrateLogging).toEqual([])
      })
    )

    onFreshDatabase(
      "an applied migration whose text changed since is logged as an error naming it, and the service still starts",
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* migrateAsBeforeChecksums
        yield* runMigrations
        const appliedText = "0".repeat(64)
        yield* sql`UPDATE schema_migrations SET checksum = ${appliedText} WHERE id = 3`

        const logged = yield* migrateLogging
        expect(logged).toHaveLength(1)
        expect(logged[0]?.level).toBe("ERROR")
        expect(logged[0]?.message).toMatch(/^migration 3 \(research resources\) differs from the one this database applied/)
        expect(logged[0]?.message).toContain("add a new migration")
        // what the database applied stays recorded, so every start says so until the text is restored
        expect((yield* recordedChecksums).find((row) => row.id === 3)?.checksum).toBe(appliedText)
      })
    )

    onFreshDatabase(
      "a new database records each migration's checksum as it applies it",
      Effect.gen(function* () {
        const logged = yield* migrateLogging
        expect(logged.map((line) => line.message)).toEqual(migrations.map((m) => `applied migration ${m.id} ${m.name}`))
        expect(yield* recordedChecksums).toEqual(
          migrations.map((m) => ({ id: m.id, checksum: checksumOf(m) }))
        )
      })
    )
  })

upgradeContract("embedded PGlite", () => PgliteClient.layer(undefined))

const databaseUrl = process.env.DATABASE_URL
describe.runIf(databaseUrl !== undefined && databaseUrl !== "")("PostgreSQL (DATABASE_URL)", () => {
  upgradeContract("PostgreSQL, a fresh schema each", () =>
    postgresInFreshSchema(databaseUrl ?? "", `test_${randomBytes(6).toString("hex")}`, (url) => PgDatabase.layer(url, 2))
  )
})
