import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { OverQuota } from "../common/DomainErrors.js"
import { inBackground } from "../db/Priority.js"
import type { LabId } from "../labs/LabId.js"
import { batcher, readArchive, type Verified } from "./ArchiveRestore.js"
import { withoutLongStrings } from "./RowText.js"
import { ArchiveError, EXCLUDED_TABLES, Header, type LabTable, labTables, quote, RESTORE_POLICY, Trailer } from "./ArchiveSchema.js"

/*
 * What a restore checks before it marks its lab (RestoreApply.ts puts the lab back after): whatever would otherwise
 * fail a step halfway, when the lab could no longer be left as it was. And the mark itself.
 */

/**
 * Rows per step to start with, and its bounds; a step aims at SLOW_MS at most (a request arriving meanwhile waits for
 * it) and doubles below FAST_MS.
 */
const FIRST_ROWS = 4
const MAX_ROWS = 4096
const SLOW_MS = 30
const FAST_MS = 10
/**
 * Text of archived rows a step sends at most (besides its first row): a table's rows may be MiB each, and on embedded
 * PGlite a request arriving during a step waits for it.
 */
export const STEP_BYTES = 1024 * 1024

/** What lab_restores.staged holds: the archive's header and trailer, all a restarted apply needs beside the archive. */
const StagedParts = Schema.parseJson(Schema.Struct({ header: Header, trailer: Trailer }))
export const encodeStaged = (verified: Verified) => JSON.stringify({ header: verified.header, trailer: verified.trailer })
export const decodeStaged = (backupId: string, text: string) =>
  Effect.map(Schema.decodeUnknown(StagedParts)(text), (parts): Verified => ({ backupId, ...parts }))

/** The schema's tables the archive has, and the archived ones the schema lost (a restore cannot put those back). */
export const tablesOf = (sql: SqlClient.SqlClient, header: Verified["header"]) =>
  Effect.gen(function* () {
    const archived = new Map(header.tables.map((t) => [t.name, t.columns]))
    const current = (yield* labTables(sql)).filter((t) => archived.has(t.name))
    const missing = [...archived.keys()].filter((name) => !(name in EXCLUDED_TABLES) && !current.some((t) => t.name === name))
    if (missing.length > 0) {
      return yield* new ArchiveError({ message: `the archive has tables this schema no longer has: ${missing.join(", ")}` })
    }
    return { archived, current, replaced: current.filter((t) => RESTORE_POLICY[t.name] === undefined) }
  })

/** Columns added since the backup that are NOT NULL without a default: rows of that table could not be inserted. */
const unfillable = (sql: SqlClient.SqlClient, staged: Verified, archived: Map<string, ReadonlyArray<string>>, tables: ReadonlyArray<LabTable>) =>
  Effect.gen(function* () {
    const required = yield* sql<{ tableName: string; columnName: string }>`
      SELECT c.table_name, c.column_name FROM information_schema.columns c
      WHERE c.table_schema = current_schema() AND c.is_nullable = 'NO' AND c.column_default IS NULL
        AND c.is_generated = 'NEVER' AND c.is_identity = 'NO'`
    for (const table of tables) {
      const had = new Set(archived.get(table.name) ?? [])
      const lacking = required.filter((r) => r.tableName === table.name && !had.has(r.columnName)).map((r) => r.columnName)
      if (lacking.length === 0 || (staged.trailer.rows[table.name] ?? 0) === 0) continue
      return yield* new ArchiveError({
        message: `${table.name}: the archive has no ${lacking.join(", ")}, which this schema requires without a default`
      })
    }
  })

/**
 * The records quota (migration 10) of the lab once restored: its rows now, less the replaced tables' rows, plus the
 * archived rows of those tables. Checked before the mark, since the steps then only count rows (a step refused halfway
 * would leave the lab half restored).
 */
const recordsFit = (sql: SqlClient.SqlClient, labId: LabId, staged: Verified, replaced: ReadonlyArray<LabTable>) =>
  Effect.gen(function* () {
    const counted = new Set(
      (yield* sql<{ name: string }>`
        SELECT DISTINCT c.relname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE t.tgname = 'lab_records_added' AND n.nspname = current_schema()`).map((r) => r.name)
    )
    const tables = replaced.filter((t) => counted.has(t.name))
    if (tables.length === 0) return
    const now = sql.literal(tables.map((t) => `(SELECT count(*) FROM ${quote(t.name)} x WHERE x.lab_id = u.lab_id)`).join(" + "))
    const archivedRows = tables.reduce((n, t) => n + (staged.trailer.rows[t.name] ?? 0), 0)
    const over = yield* sql<{ plan: string; slug: string; after: number; lim: number }>`
      SELECT l.plan, l.slug, (u.records - (${now}) + ${archivedRows}::float8)::float8 AS after, p.records::float8 AS lim
      FROM lab_usage u JOIN labs l ON l.id = u.lab_id JOIN plan_limits p ON p.plan = l.plan
      WHERE u.lab_id = ${labId}`
    const found = over[0]
    if (found !== undefined && found.after > found.lim) {
      return yield* new OverQuota({
        quota: "records",
        reason: `quota exceeded: records of the ${found.plan} plan (lab ${found.slug} would hold ${found.after} once restored, limit ${found.lim})`
      })
    }
  })

const Rules = Schema.Array(Schema.Struct({ name: Schema.String, expr: Schema.String }))

/** The table's CHECK constraints and NOT NULL columns, as conditions a row breaks when they are true. */
const rulesOf = (sql: SqlClient.SqlClient, table: LabTable, archivedColumns: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const rows = yield* sql`
      SELECT k.conname AS name, '(' || pg_get_expr(k.conbin, k.conrelid) || ') IS FALSE' AS expr
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relname = ${table.name} AND k.contype = 'c'
      UNION ALL
      SELECT c.column_name || ' NOT NULL', quote_ident(c.column_name) || ' IS NULL'
      FROM information_schema.columns c
      WHERE c.table_schema = current_schema() AND c.table_name = ${table.name} AND c.is_nullable = 'NO'
        AND c.column_name IN ${sql.in(archivedColumns.length > 0 ? [...archivedColumns] : [""])}`
    return yield* Effect.orDie(Schema.decodeUnknown(Rules)(rows))
  })

const Names = Schema.Array(Schema.Struct({ name: Schema.String }))

/**
 * The table's columns of type text that no CHECK constraint reads: any text is a value of theirs, so a row's long
 * text there is checked as "" (a file's MiB of content is not sent to the database to be checked).
 */
const freeTextOf = (sql: SqlClient.SqlClient, table: LabTable) =>
  Effect.gen(function* () {
    const rows = yield* sql`
      SELECT c.column_name AS name FROM information_schema.columns c
      WHERE c.table_schema = current_schema() AND c.table_name = ${table.name} AND c.data_type = 'text' AND c.domain_name IS NULL
        AND NOT EXISTS (
          SELECT 1 FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
          JOIN pg_attribute a ON a.attrelid = r.oid AND a.attname = c.column_name
          WHERE n.nspname = current_schema() AND r.relname = ${table.name} AND k.contype = 'c' AND a.attnum = ANY (k.conkey))`
    return new Set((yield* Effect.orDie(Schema.decodeUnknown(Names)(rows))).map((r) => r.name))
  })

/** Characters of a free text value beyond which it is checked as "". */
const LONG_TEXT = 1024

const Checked = Schema.Array(Schema.Struct({ broken: Schema.NullOr(Schema.String), bytes: Schema.NullOr(Schema.Number) }))

/** A restore's archive checked: whole, of its lab, its rows taken by the schema; and the bytes of its files. */
export interface CheckedArchive {
  readonly verified: Verified
  readonly fileBytes: number
}

/**
 * Read the backup's archive through (ArchiveRestore.ts) before the mark, without touching the lab: whole, of this lab,
 * every row counted as its trailer says, and each batch of rows read as the table's row type in a read-only statement
 * (a value its type refuses fails here) with the table's CHECK constraints and NOT NULL columns evaluated on it. A
 * column added since the backup that is NOT NULL without a default is refused in markRestore. Uniqueness and foreign
 * keys are not checked: the archive is a consistent snapshot of one lab.
 */
export const checkArchive = (
  sql: SqlClient.SqlClient,
  backupId: string,
  labId: LabId,
  sha256: string
): Effect.Effect<CheckedArchive, ArchiveError | SqlError> =>
  inBackground(
    Effect.gen(function* () {
      const counts = new Map<string, number>()
      const checks = new Map<string, Option.Option<{ readonly broken: string; readonly free: ReadonlySet<string> }>>()
      let tables = new Map<string, LabTable>()
      let archived = new Map<string, ReadonlyArray<string>>()
      let fileBytes = 0
      const sizer = stepSizer()
      /** The condition a row of the table breaks (its rule's name), or none when its rows are not checked. */
      const checkOf = (name: string) =>
        Effect.gen(function* () {
          const known = checks.get(name)
          if (known !== undefined) return known
          const table = tables.get(name)
          if (table === undefined || RESTORE_POLICY[name] === "keep") {
            checks.set(name, Option.none())
            return Option.none()
          }
          const rules = yield* rulesOf(sql, table, archived.get(name) ?? [])
          const broken = rules.length === 0 ? "NULL::text" : `coalesce(${rules.map((r) => `CASE WHEN ${r.expr} THEN ${sqlString(r.name)} END`).join(", ")})`
          const check = Option.some({ broken, free: yield* freeTextOf(sql, table) })
          checks.set(name, check)
          return check
        })
      const batches = batcher(sizer.rows, STEP_BYTES, (name, batch) =>
        Effect.gen(function* () {
          const check = yield* checkOf(name)
          if (Option.isNone(check)) return
          const bytes = name === "files" ? "x.size::float8" : "0::float8"
          const started = performance.now()
          const [result] = yield* Effect.flatMap(
            sql`SELECT min(${sql.literal(check.value.broken)}) AS broken, sum(${sql.literal(bytes)})::float8 AS bytes
                FROM json_populate_recordset(NULL::${sql.literal(quote(name))}, ${batch}::json) x`,
            (r) => Effect.orDie(Schema.decodeUnknown(Checked)(r))
          )
          sizer.took(performance.now() - started, true)
          if (result?.broken != null) {
            return yield* new ArchiveError({ message: `${name}: the archive has a row this schema refuses (${result.broken})` })
          }
          fileBytes += result?.bytes ?? 0
        })
      )
      const verified = yield* readArchive(sql, backupId, labId, sha256, (line) =>
        Effect.gen(function* () {
          if (line._tag === "header") {
            const found = yield* tablesOf(sql, line.header)
            tables = new Map(found.current.map((t) => [t.name, t]))
            archived = found.archived
          } else if (line._tag === "row") {
            counts.set(line.table, (counts.get(line.table) ?? 0) + 1)
            const check = yield* checkOf(line.table)
            if (Option.isSome(check)) yield* batches.add({ table: line.table, row: withoutLongStrings(line.row, check.value.free, LONG_TEXT) })
          } else {
            yield* batches.end
          }
        })
      )
      for (const name of new Set([...counts.keys(), ...Object.keys(verified.trailer.rows)])) {
        const [read, said] = [counts.get(name) ?? 0, verified.trailer.rows[name] ?? 0]
        if (read !== said) return yield* new ArchiveError({ message: `${name}: the archive has ${read} rows where its end says ${said}` })
      }
      return { verified, fileBytes }
    })
  )

const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`

/** Rows per step: halved after a slow step, doubled after a fast full one. */
export const stepSizer = () => {
  let rows = FIRST_ROWS
  return {
    rows: () => rows,
    took: (ms: number, full: boolean) => {
      if (ms > SLOW_MS) rows = Math.max(1, Math.floor(rows / 2))
      else if (ms < FAST_MS && full) rows = Math.min(MAX_ROWS, rows * 2)
    }
  }
}

/**
 * In the caller's (first, short) transaction: check what a step could otherwise only find out halfway (tables the
 * schema lost, columns it now requires, the records quota), then set the lab's mark.
 */
export const markRestore = (sql: SqlClient.SqlClient, labId: LabId, staged: Verified) =>
  Effect.gen(function* () {
    const { archived, current, replaced } = yield* tablesOf(sql, staged.header)
    yield* unfillable(sql, staged, archived, current)
    yield* recordsFit(sql, labId, staged, replaced)
    yield* sql`INSERT INTO lab_restores (lab_id, backup_id, staged, heartbeat_at)
               VALUES (${labId}, ${staged.backupId}, ${encodeStaged(staged)}::jsonb, now())`
  })

