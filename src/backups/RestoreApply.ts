import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Schedule, Schema } from "effect"
import { allowingLongStatements, inBackground } from "../db/Priority.js"
import type { LabId } from "../labs/LabId.js"
import { COUNTED_NOT_REFUSED } from "../quotas/RecordsQuota.js"
import { batcher, readArchive, type Verified } from "./ArchiveRestore.js"
import { ArchiveError, type LabTable, quote, RESTORE_POLICY } from "./ArchiveSchema.js"
import { type SplitRow, splitLongStrings } from "./RowText.js"
import { STEP_BYTES, stepSizer, tablesOf } from "./RestoreCheck.js"

/*
 * Putting a checked archive in the lab in short committed steps (migration 15): a first short transaction checks what
 * can be checked and sets the lab's mark (RestoreCheck.ts), which shuts the lab's writes out (the restore gate); then
 * the lab's rows of the replaced tables are deleted and the archive is read again from its chunks, its rows inserted a
 * bounded batch per transaction, so other labs' requests are served between steps; a last transaction removes the
 * mark. The deletes and the inserts can be run again from the start, so a restore interrupted after its mark is
 * finished by running the apply again: what it needs is the mark and the backup's chunks, both in the database.
 */

/** How long the apply waits for writes that began before the mark (on PostgreSQL) before going on. */
const WRITERS_WAIT = Duration.seconds(10)

const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))
const count = (rows: ReadonlyArray<unknown>) => Effect.map(Effect.orDie(Schema.decodeUnknown(Count)(rows)), (r) => r[0]?.n ?? 0)

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
  batch: (rows: number) => Effect.Effect<{ readonly done: boolean; readonly full: boolean }, E, R>
) =>
  Effect.gen(function* () {
    const sizer = stepSizer()
    for (;;) {
      const rows = sizer.rows()
      const started = performance.now()
      const result = yield* step(sql, labId, backupId, batch(rows))
      sizer.took(performance.now() - started, result.full)
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
    (n) => ({ done: n < rows, full: n === rows })
  )

/**
 * Insert a batch of archived rows (a JSON array of them) into the table, those of another lab left out; merged
 * tables keep the rows they have. How many were put.
 */
const insertBatch = (sql: SqlClient.SqlClient, labId: LabId, table: LabTable, columns: ReadonlyArray<string>, merge: boolean, batch: string) =>
  Effect.flatMap(
    sql`
      WITH put AS (
        INSERT INTO ${sql.literal(quote(table.name))} (${sql.literal(columns.map(quote).join(", "))}) OVERRIDING SYSTEM VALUE
        SELECT ${sql.literal(columns.map((c) => `p.${quote(c)}`).join(", "))}
        FROM json_populate_recordset(NULL::${sql.literal(quote(table.name))}, ${batch}::json) p
        WHERE p.lab_id = ${labId}
        ${sql.literal(merge ? "ON CONFLICT DO NOTHING" : "")}
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM put`,
    count
  )

/** Characters of a row beyond which its long texts are sent as parameters of their own, not inside its JSON. */
const BIG_ROW = 64 * 1024
const LONG_TEXT = 1024

/**
 * Insert one big row, its long texts (of `text` columns) as parameters of their own: the database does not parse
 * MiB of JSON for a file's content. How many were put (0 or 1).
 */
const insertRow = (sql: SqlClient.SqlClient, labId: LabId, table: LabTable, columns: ReadonlyArray<string>, merge: boolean, split: SplitRow) =>
  Effect.flatMap(
    sql`
      WITH put AS (
        INSERT INTO ${sql.literal(quote(table.name))} (${sql.literal(columns.map(quote).join(", "))}) OVERRIDING SYSTEM VALUE
        SELECT ${sql.csv(columns.map((c) => {
          const text = split.strings.get(c)
          return text === undefined ? sql.literal(`p.${quote(c)}`) : sql`${text}::text`
        }))}
        FROM json_populate_record(NULL::${sql.literal(quote(table.name))}, ${split.row}::json) p
        WHERE p.lab_id = ${labId}
        ${sql.literal(merge ? "ON CONFLICT DO NOTHING" : "")}
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM put`,
    count
  )

const Names = Schema.Array(Schema.Struct({ tableName: Schema.String, name: Schema.String }))

/** The columns of type text (not a domain) of each table. */
const textColumns = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    const rows = yield* Effect.flatMap(
      sql`SELECT table_name, column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema() AND data_type = 'text' AND domain_name IS NULL`,
      (r) => Effect.orDie(Schema.decodeUnknown(Names)(r))
    )
    const byTable = new Map<string, Set<string>>()
    for (const r of rows) byTable.set(r.tableName, (byTable.get(r.tableName) ?? new Set<string>()).add(r.name))
    return byTable
  })

/**
 * One read of the archive, inserting the rows of the tables `ready` lets in, a batch per step (its rows sized by the
 * time the last step took); the rows put per table. A table is let in when every table before it in the schema's
 * foreign-key order is done or was read earlier in this pass: with the archive in that order (the dump's, unless a
 * foreign key was added since), one pass puts every table back.
 */
const insertPass = (sql: SqlClient.SqlClient, labId: LabId, verified: Verified, sha256: string, plan: ReadonlyArray<LabTable>, done: Set<string>, archived: Map<string, ReadonlyArray<string>>) =>
  Effect.gen(function* () {
    const sizer = stepSizer()
    const put = new Map<string, number>()
    const byName = new Map(plan.map((t) => [t.name, t]))
    const seen = new Set<string>()
    const ready = (name: string) => {
      for (const t of plan) {
        if (t.name === name) return true
        if (!done.has(t.name) && !seen.has(t.name)) return false
      }
      return false
    }
    const letIn = new Map<string, boolean>()
    const texts = yield* inBackground(textColumns(sql))
    const columnsOf = (table: LabTable) => {
      const had = new Set(archived.get(table.name) ?? [])
      return table.insertable.filter((c) => had.has(c))
    }
    /** A step that inserts rows of the table: its time sizes the next batch. */
    const timedStep = (name: string, rows: number, insert: Effect.Effect<number, SqlError>) =>
      Effect.gen(function* () {
        const started = performance.now()
        const n = yield* step(sql, labId, verified.backupId, insert)
        sizer.took(performance.now() - started, true)
        put.set(name, (put.get(name) ?? 0) + n)
        if (n > rows) return yield* new ArchiveError({ message: `${name}: more rows put back than read` })
      })
    const batches = batcher(sizer.rows, STEP_BYTES, (name, batch, rows) =>
      Effect.gen(function* () {
        const table = byName.get(name)
        if (table === undefined) return
        yield* timedStep(name, rows, insertBatch(sql, labId, table, columnsOf(table), RESTORE_POLICY[name] === "merge", batch))
      })
    )
    yield* readArchive(sql, verified.backupId, verified.header.labId, sha256, (line) =>
      Effect.gen(function* () {
        if (line._tag === "trailer") return yield* batches.end
        if (line._tag !== "row" || done.has(line.table) || !byName.has(line.table)) return
        let allowed = letIn.get(line.table)
        if (allowed === undefined) {
          allowed = ready(line.table)
          letIn.set(line.table, allowed)
        }
        if (!allowed) return
        seen.add(line.table)
        const table = byName.get(line.table)
        if (table !== undefined && line.row.length > BIG_ROW) {
          const split = splitLongStrings(line.row, texts.get(line.table) ?? new Set(), LONG_TEXT)
          if (split.strings.size > 0) {
            yield* batches.end
            return yield* timedStep(line.table, 1, insertRow(sql, labId, table, columnsOf(table), RESTORE_POLICY[line.table] === "merge", split))
          }
        }
        yield* batches.add(line)
      })
    )
    return put
  })

/**
 * Put the archive in a marked lab, from the start: the lab's rows of the replaced tables deleted (children first),
 * the archived ones inserted as the archive is read (parents first); merged tables get their archived rows back
 * beside the newer ones, kept tables are not touched (RESTORE_POLICY). Each replaced table must get back exactly the
 * rows the trailer counts. Returns the rows put back.
 */
export const applyRestore = (sql: SqlClient.SqlClient, labId: LabId, verified: Verified, sha256: string): Effect.Effect<number, ArchiveError | SqlError> =>
  Effect.gen(function* () {
    yield* inBackground(writersBefore(sql))
    const { archived, current, replaced } = yield* inBackground(tablesOf(sql, verified.header))
    for (const table of [...replaced].reverse()) yield* inSteps(sql, labId, verified.backupId, deleteBatch(sql, labId, table))
    const plan = current.filter((t) => RESTORE_POLICY[t.name] !== "keep")
    const done = new Set<string>()
    const put = new Map<string, number>()
    while (done.size < plan.length) {
      const passed = yield* insertPass(sql, labId, verified, sha256, plan, done, archived)
      const before = done.size
      for (const table of plan) {
        if (done.has(table.name)) continue
        const n = passed.get(table.name)
        // a table of the archive with no rows is never met in a pass: it is done once every table before it is
        if (n === undefined && (verified.trailer.rows[table.name] ?? 0) > 0) break
        done.add(table.name)
        put.set(table.name, n ?? 0)
      }
      if (done.size === before) return yield* new ArchiveError({ message: "the archive's tables cannot be put back in this schema's order" })
    }
    let restored = 0
    for (const table of plan) {
      const n = put.get(table.name) ?? 0
      const expected = verified.trailer.rows[table.name] ?? 0
      if (RESTORE_POLICY[table.name] !== "merge" && n !== expected) {
        return yield* new ArchiveError({ message: `${table.name}: ${n} rows put back of the ${expected} archived` })
      }
      restored += n
    }
    return restored
  })
