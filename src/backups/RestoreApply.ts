import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Schedule, Schema } from "effect"
import { allowingLongStatements, inBackground } from "../db/Priority.js"
import type { LabId } from "../labs/LabId.js"
import { COUNTED_NOT_REFUSED } from "../quotas/RecordsQuota.js"
import type { Staged } from "./ArchiveRestore.js"
import { ArchiveError, type LabTable, quote, RESTORE_POLICY } from "./ArchiveSchema.js"
import { STEP_BYTES, stepSizer, tablesOf } from "./RestoreCheck.js"

/*
 * Putting a staged archive in the lab in short committed steps (migration 15): a first short transaction checks what
 * can be checked and sets the lab's mark (RestoreCheck.ts), which shuts the lab's writes out (the restore gate); then the lab's rows of
 * the replaced tables are deleted and the staged rows inserted, a bounded batch per transaction, so other labs'
 * requests are served between steps; a last transaction removes the mark. Deletes and inserts from restore_rows can
 * be run again from the start, so a restore interrupted after its mark is finished by running the apply again.
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
          SELECT b.seq, b.row FROM (
            SELECT r.seq, r.row, sum(pg_column_size(r.row)) OVER (ORDER BY r.seq) - pg_column_size(r.row) AS before
            FROM restore_rows r
            WHERE r.backup_id = ${backupId} AND r.tbl = ${table.name} AND r.seq > ${after}::bigint
            ORDER BY r.seq LIMIT ${rows}) b
          WHERE b.before < ${STEP_BYTES}
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
        // a step may read fewer rows than asked (STEP_BYTES): the table is done when one reads none
        return { done: r.read === 0, full: r.read === rows }
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
