import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Schedule, Schema } from "effect"
import { QuotaExceeded } from "../http/Errors.js"
import { allowingLongStatements, inBackground } from "../db/Priority.js"
import type { LabId } from "../labs/LabId.js"
import { COUNTED_NOT_REFUSED } from "../quotas/RecordsQuota.js"
import type { Staged } from "./ArchiveRestore.js"
import { ArchiveError, EXCLUDED_TABLES, Header, type LabTable, labTables, quote, RESTORE_POLICY, Trailer } from "./ArchiveSchema.js"

/*
 * Putting a staged archive in the lab in short committed steps (migration 15): a first short transaction checks what
 * can be checked and sets the lab's mark, which shuts the lab's writes out (the restore gate); then the lab's rows of
 * the replaced tables are deleted and the staged rows inserted, a bounded batch per transaction, so other labs'
 * requests are served between steps; a last transaction removes the mark. Deletes and inserts from restore_rows can
 * be run again from the start, so a restore interrupted after its mark is finished by running the apply again.
 */

/** Rows per step to start with, and its bounds; a step aims at SLOW_MS at most (a request arriving meanwhile waits for it) and doubles below FAST_MS. */
const FIRST_ROWS = 4
const MAX_ROWS = 4096
const SLOW_MS = 30
const FAST_MS = 10
/** How long the apply waits for writes that began before the mark (on PostgreSQL) before going on. */
const WRITERS_WAIT = Duration.seconds(10)

const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))
const count = (rows: ReadonlyArray<unknown>) => Effect.map(Effect.orDie(Schema.decodeUnknown(Count)(rows)), (r) => r[0]?.n ?? 0)

/** What lab_restores.staged holds: the archive's header and trailer, all a restarted apply needs beside restore_rows. */
const StagedParts = Schema.parseJson(Schema.Struct({ header: Header, trailer: Trailer }))
export const encodeStaged = (staged: Staged) => JSON.stringify({ header: staged.header, trailer: staged.trailer })
export const decodeStaged = (backupId: string, text: string) =>
  Effect.map(Schema.decodeUnknown(StagedParts)(text), (parts): Staged => ({ backupId, ...parts }))

/** The schema's tables the archive has, and the archived ones the schema lost (a restore cannot put those back). */
const tablesOf = (sql: SqlClient.SqlClient, staged: Staged) =>
  Effect.gen(function* () {
    const archived = new Map(staged.header.tables.map((t) => [t.name, t.columns]))
    const current = (yield* labTables(sql)).filter((t) => archived.has(t.name))
    const missing = [...archived.keys()].filter((name) => !(name in EXCLUDED_TABLES) && !current.some((t) => t.name === name))
    if (missing.length > 0) {
      return yield* new ArchiveError({ message: `the archive has tables this schema no longer has: ${missing.join(", ")}` })
    }
    return { archived, current, replaced: current.filter((t) => RESTORE_POLICY[t.name] === undefined) }
  })

/** Columns added since the backup that are NOT NULL without a default: rows of that table could not be inserted. */
const unfillable = (sql: SqlClient.SqlClient, staged: Staged, archived: Map<string, ReadonlyArray<string>>, tables: ReadonlyArray<LabTable>) =>
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
 * staged rows of those tables. Checked before the mark, since the steps then only count rows (a step refused halfway
 * would leave the lab half restored).
 */
const recordsFit = (sql: SqlClient.SqlClient, labId: LabId, staged: Staged, replaced: ReadonlyArray<LabTable>) =>
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
    const over = yield* sql<{ plan: string; slug: string; after: number; lim: number }>`
      SELECT l.plan, l.slug, (u.records - (${now}) + (
               SELECT count(*) FROM restore_rows r WHERE r.backup_id = ${staged.backupId} AND r.tbl IN ${sql.in(tables.map((t) => t.name))}
             ))::float8 AS after, p.records::float8 AS lim
      FROM lab_usage u JOIN labs l ON l.id = u.lab_id JOIN plan_limits p ON p.plan = l.plan
      WHERE u.lab_id = ${labId}`
    const found = over[0]
    if (found !== undefined && found.after > found.lim) {
      return yield* new QuotaExceeded({
        message: `quota exceeded: records of the ${found.plan} plan (lab ${found.slug} would hold ${found.after} once restored, limit ${found.lim})`
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

const Checked = Schema.Array(Schema.Struct({ read: Schema.Number, last: Schema.NullOr(Schema.String), broken: Schema.NullOr(Schema.String) }))

/**
 * Would the schema take the staged rows? Before the mark, in read-only statements a batch at a time (the lab is not
 * touched): each row read as the table's row type (a value its type refuses fails here), and the table's CHECK
 * constraints and NOT NULL columns evaluated on it; a column added since the backup that is NOT NULL without a
 * default is refused in markRestore. Uniqueness and foreign keys are not checked: the archive is a consistent
 * snapshot of one lab.
 */
export const checkRows = (sql: SqlClient.SqlClient, _labId: LabId, staged: Staged): Effect.Effect<void, ArchiveError | SqlError> =>
  inBackground(
    Effect.gen(function* () {
      const { archived, current } = yield* tablesOf(sql, staged)
      for (const table of current) {
        if (RESTORE_POLICY[table.name] === "keep" || (staged.trailer.rows[table.name] ?? 0) === 0) continue
        const rules = yield* rulesOf(sql, table, archived.get(table.name) ?? [])
        const broken = rules.length === 0 ? "NULL::text" : `coalesce(${rules.map((r) => `CASE WHEN ${r.expr} THEN ${sqlString(r.name)} END`).join(", ")})`
        let after = "0"
        const sizer = stepSizer()
        for (;;) {
          const rows = sizer.rows()
          const started = performance.now()
          const [result] = yield* Effect.flatMap(
            sql`
              WITH batch AS (
                SELECT r.seq AS restore_seq_, r.row AS restore_row_ FROM restore_rows r
                WHERE r.backup_id = ${staged.backupId} AND r.tbl = ${table.name} AND r.seq > ${after}::bigint
                ORDER BY r.seq LIMIT ${rows}
              )
              SELECT (SELECT count(*) FROM batch)::int AS read, (SELECT max(restore_seq_) FROM batch)::text AS last,
                (SELECT min(${sql.literal(broken)})
                 FROM batch b, LATERAL json_populate_record(NULL::${sql.literal(quote(table.name))}, b.restore_row_) x) AS broken`,
            (r) => Effect.orDie(Schema.decodeUnknown(Checked)(r))
          )
          if (result === undefined) break
          if (result.broken !== null) {
            return yield* new ArchiveError({ message: `${table.name}: the archive has a row this schema refuses (${result.broken})` })
          }
          sizer.took(performance.now() - started, result.read === rows)
          if (result.last !== null) after = result.last
          if (result.read < rows) break
        }
      }
    })
  )

const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`

/**
 * In the caller's (first, short) transaction: check what a step could otherwise only find out halfway (tables the
 * schema lost, columns it now requires, the records quota), then set the lab's mark.
 */
export const markRestore = (sql: SqlClient.SqlClient, labId: LabId, staged: Staged) =>
  Effect.gen(function* () {
    const { archived, current, replaced } = yield* tablesOf(sql, staged)
    yield* unfillable(sql, staged, archived, current)
    yield* recordsFit(sql, labId, staged, replaced)
    yield* sql`INSERT INTO lab_restores (lab_id, backup_id, staged, heartbeat_at)
               VALUES (${labId}, ${staged.backupId}, ${encodeStaged(staged)}::jsonb, now())`
  })

/** Remove the lab's mark (in the caller's transaction): its writes are accepted again. */
export const unmarkRestore = (sql: SqlClient.SqlClient, labId: LabId, backupId: string) =>
  sql`DELETE FROM lab_restores WHERE lab_id = ${labId} AND backup_id = ${backupId}`

/**
 * Wait until the writes that began before the mark have ended (PostgreSQL: other sessions' transactions in progress
 * when the mark committed), so none of them lands in the lab after the apply deleted its rows. Bounded: a
 * transaction that stays open that long is not one of the service's short writes.
 */
const writersBefore = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    const [snapshot] = yield* sql<{ s: string }>`SELECT pg_current_snapshot()::text AS s`
    if (snapshot === undefined) return
    const open = Effect.flatMap(
      sql`SELECT count(*)::int AS n FROM pg_snapshot_xip(${snapshot.s}::pg_snapshot) x WHERE pg_xact_status(x) = 'in progress'`,
      count
    )
    yield* Effect.repeat(open, { while: (n) => n > 0, schedule: Schedule.spaced(Duration.millis(20)) }).pipe(Effect.timeoutOption(WRITERS_WAIT))
  })

/** Rows per step: halved after a slow step, doubled after a fast full one. */
const stepSizer = () => {
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
 * One step: its own transaction, named the restore's (the gate lets it write the lab), counted but never refused by
 * the records quota (checked before the mark), its heartbeat written; fails when the mark is no longer this restore's.
 */
const step = <A, E, R>(sql: SqlClient.SqlClient, labId: LabId, backupId: string, body: Effect.Effect<A, E, R>) =>
  inBackground(
    allowingLongStatements(
      Effect.gen(function* () {
        // one statement: on PGlite a transaction holds the only session from its first statement to its commit
        const beat = yield* Effect.flatMap(
          sql`WITH b AS (UPDATE lab_restores SET heartbeat_at = now() WHERE lab_id = ${labId} AND backup_id = ${backupId} RETURNING 1)
              SELECT set_config('lab.restore', ${backupId}, true) AS restore, set_config(${COUNTED_NOT_REFUSED}, 'on', true) AS counted,
                     (SELECT count(*) FROM b)::int AS n`,
          count
        )
        if (beat === 0) return yield* new ArchiveError({ message: "the restore's mark on the lab is gone: another runner ended it" })
        return yield* body
      }).pipe(sql.withTransaction)
    )
  )

/** Run `batch(rows)` in steps until it reports it is done; each step timed to size the next. */
const inSteps = <E, R>(
  sql: SqlClient.SqlClient,
  labId: LabId,
  backupId: string,
  batch: (rows: number) => Effect.Effect<{ readonly done: boolean }, E, R>
) =>
  Effect.gen(function* () {
    const sizer = stepSizer()
    for (;;) {
      const rows = sizer.rows()
      const started = performance.now()
      const result = yield* step(sql, labId, backupId, batch(rows))
      sizer.took(performance.now() - started, !result.done)
      if (result.done) return
    }
  })

/** Delete up to `rows` of the lab's rows of the table; done when fewer were left. */
const deleteBatch = (sql: SqlClient.SqlClient, labId: LabId, table: LabTable) => (rows: number) =>
  Effect.map(
    Effect.flatMap(
      sql`WITH gone AS (
            DELETE FROM ${sql.literal(quote(table.name))} WHERE ctid = ANY (ARRAY(
              SELECT ctid FROM ${sql.literal(quote(table.name))} WHERE lab_id = ${labId} LIMIT ${rows}))
            RETURNING 1)
          SELECT count(*)::int AS n FROM gone`,
      count
    ),
    (n) => ({ done: n < rows })
  )

const Put = Schema.Array(Schema.Struct({ read: Schema.Number, put: Schema.Number, last: Schema.NullOr(Schema.String) }))

/**
 * Insert the next `rows` staged rows of the table after seq `after` into `target` (the table, or a check copy of it):
 * how many were read and put, and the last seq.
 */
const insertBatch = (
  sql: SqlClient.SqlClient,
  labId: LabId,
  backupId: string,
  table: LabTable,
  columns: ReadonlyArray<string>,
  merge: boolean,
  target: string = quote(table.name)
) =>
  (after: string, rows: number) =>
    Effect.flatMap(
      sql`
        WITH batch AS (
          SELECT r.seq, r.row FROM restore_rows r
          WHERE r.backup_id = ${backupId} AND r.tbl = ${table.name} AND r.seq > ${after}::bigint
          ORDER BY r.seq LIMIT ${rows}
        ), put AS (
          INSERT INTO ${sql.literal(target)} (${sql.literal(columns.map(quote).join(", "))}) OVERRIDING SYSTEM VALUE
          SELECT ${sql.literal(columns.map((c) => `p.${quote(c)}`).join(", "))}
          FROM batch r, json_populate_record(NULL::${sql.literal(quote(table.name))}, r.row) p
          WHERE p.lab_id = ${labId}
          ${sql.literal(merge ? "ON CONFLICT DO NOTHING" : "")}
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM batch)::int AS read, (SELECT count(*) FROM put)::int AS put,
               (SELECT max(seq) FROM batch)::text AS last`,
      (result) => Effect.map(Effect.orDie(Schema.decodeUnknown(Put)(result)), (r) => r[0] ?? { read: 0, put: 0, last: null })
    )

/** The staged rows of one table into the lab, in steps; the rows put. */
const putBack = (sql: SqlClient.SqlClient, labId: LabId, staged: Staged, table: LabTable, archivedColumns: ReadonlyArray<string>, merge: boolean) =>
  Effect.gen(function* () {
    const had = new Set(archivedColumns)
    const insert = insertBatch(sql, labId, staged.backupId, table, table.insertable.filter((c) => had.has(c)), merge)
    let after = "0"
    let put = 0
    yield* inSteps(sql, labId, staged.backupId, (rows) =>
      Effect.map(insert(after, rows), (r) => {
        put += r.put
        if (r.last !== null) after = r.last
        return { done: r.read < rows }
      })
    )
    return put
  })

/**
 * Put the staged rows in a marked lab, from the start: the lab's rows of the replaced tables deleted (children first),
 * the archived ones inserted (parents first); merged tables get their archived rows back beside the newer ones, kept
 * tables are not touched (RESTORE_POLICY). Each replaced table must get back exactly the rows the trailer counts.
 * Returns the rows put back.
 */
export const applyRestore = (sql: SqlClient.SqlClient, labId: LabId, staged: Staged): Effect.Effect<number, ArchiveError | SqlError> =>
  Effect.gen(function* () {
    yield* inBackground(writersBefore(sql))
    const { archived, current, replaced } = yield* inBackground(tablesOf(sql, staged))
    for (const table of [...replaced].reverse()) yield* inSteps(sql, labId, staged.backupId, deleteBatch(sql, labId, table))
    let restored = 0
    for (const table of current) {
      const policy = RESTORE_POLICY[table.name]
      if (policy === "keep") continue
      const n = yield* putBack(sql, labId, staged, table, archived.get(table.name) ?? [], policy === "merge")
      const expected = staged.trailer.rows[table.name] ?? 0
      if (policy !== "merge" && n !== expected) {
        return yield* new ArchiveError({ message: `${table.name}: ${n} rows put back of the ${expected} archived` })
      }
      restored += n
    }
    return restored
  })
