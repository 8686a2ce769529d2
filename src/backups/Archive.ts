import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { DatabaseKind } from "../db/DatabaseKind.js"
import { inBackground } from "../db/Priority.js"
import type { LabId } from "../labs/LabId.js"
import type { Verified } from "./ArchiveRestore.js"
import { applyRestore } from "./RestoreApply.js"
import { checkArchive, markRestore } from "./RestoreCheck.js"
import { ArchiveError, type Dump, FORMAT, type LabTable, labTables, quote, RESTORE_POLICY, ROW_PREFIX, VERSION } from "./ArchiveSchema.js"
import { type ChunkWriter, chunkWriter, clearChunks } from "./ArchiveStore.js"

/**
 * A lab's snapshot, generic over the schema: every table with a `lab_id` column
 * (found in information_schema when the backup runs, so tables added by any
 * feature are covered), its rows for the lab as JSON (row_to_json), as gzip'd
 * NDJSON:
 *
 *   {"format":"lab-service-backup","version":1,"labId":…,"createdAt":…,"tables":[{"name":…,"columns":[…]}…]}
 *   {"table":"tasks","row":{…}}            one line per row, tables in foreign-key order
 *   {"end":true,"rows":{"tasks":12,…}}     the trailer: a truncated archive has none
 *
 * stored in chunks as it is compressed (ArchiveStore.ts). The restore is ArchiveRestore.ts; what both share is
 * ArchiveSchema.ts.
 */
export { foreignKeyOrder } from "./ArchiveFormat.js"
export { ArchiveError, type Dump, EXCLUDED_TABLES, FORMAT, type LabTable, RESTORE_POLICY, VERSION } from "./ArchiveSchema.js"

/** Text per page read (about: a page is sized from the last one's), and the rows of a table's first page. */
const PAGE_BYTES = 1024 * 1024
const FIRST_PAGE_ROWS = 4
const MAX_PAGE_ROWS = 4096
/** Attempts in short steps before the last one, in one transaction (embedded PGlite only). */
const STEP_ATTEMPTS = 3

const Page = Schema.Array(Schema.Struct({ row: Schema.String, key: Schema.String, changed: Schema.Boolean, bytes: Schema.Number }))
const decodePage = Schema.decodeUnknown(Page)
const decodeKey = Schema.decodeUnknown(Schema.parseJson(Schema.Array(Schema.String)))
const Xid = Schema.Array(Schema.Struct({ xid: Schema.String }))

/**
 * How an attempt reads: `read` wraps each reading statement (into a snapshot's connection, or not at all), and
 * `since` is the transaction id the attempt began at when rows changed after it must be noticed (short steps).
 */
interface Reading {
  readonly read: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly since: Option.Option<string>
}

/** One page of a table's rows of the lab, after `after` (the previous page's last key) in the table's key order. */
const page = (sql: SqlClient.SqlClient, table: LabTable, labId: LabId, after: Option.Option<ReadonlyArray<string>>, limit: number, since: Option.Option<string>) => {
  const key = table.key.columns
  const columns = sql.literal(key.map((c) => (c.name === "ctid" ? "t.ctid" : `t.${quote(c.name)}`)).join(", "))
  const direction = table.key.descending ? "DESC" : "ASC"
  const order = sql.literal(key.map((c) => `${c.name === "ctid" ? "t.ctid" : `t.${quote(c.name)}`} ${direction}`).join(", "))
  const keyText = sql.literal(`json_build_array(${key.map((c) => `${c.name === "ctid" ? "t.ctid" : `t.${quote(c.name)}`}::text`).join(", ")})::text`)
  const from = Option.match(after, {
    onNone: () => sql`TRUE`,
    onSome: (values) =>
      sql`(${columns}) ${sql.literal(table.key.descending ? "<" : ">")} (${sql.csv(key.map((c, i) => sql`${values[i] ?? ""}::${sql.literal(c.type)}`))})`
  })
  const changed = Option.match(since, { onNone: () => sql`FALSE`, onSome: (xid) => sql`age(t.xmin) < age(${xid}::xid)` })
  // the stored-bytes quota counts the size of files: a backup notes how much of it it holds (a restore's share)
  const bytes = sql.literal(table.name === "files" ? "t.size::float8" : "0::float8")
  return inBackground(
    Effect.flatMap(
      sql`SELECT row_to_json(t)::text AS row, ${keyText} AS key, ${changed} AS changed, ${bytes} AS bytes
          FROM ${sql.literal(quote(table.name))} t WHERE t.lab_id = ${labId} AND ${from}
          ORDER BY ${order} LIMIT ${limit}`,
      (rows) => Effect.orDie(decodePage(rows))
    )
  )
}

/** A table's rows into the archive; false when a row changed since the attempt began (the attempt must start over). */
const dumpTable = (sql: SqlClient.SqlClient, writer: ChunkWriter, table: LabTable, labId: LabId, reading: Reading) =>
  Effect.gen(function* () {
    const prefix = `${ROW_PREFIX}${JSON.stringify(table.name)},"row":`
    // history and live compute are merged or kept by a restore, never replaced: their changes cannot spoil it
    const since = RESTORE_POLICY[table.name] === undefined ? reading.since : Option.none()
    let after = Option.none<ReadonlyArray<string>>()
    let limit = FIRST_PAGE_ROWS
    let rows = 0
    let fileBytes = 0
    for (;;) {
      const batch = yield* reading.read(page(sql, table, labId, after, limit, since))
      if (batch.some((r) => r.changed)) return Option.none()
      let text = ""
      for (const r of batch) {
        text += `${prefix}${r.row}}\n`
        fileBytes += r.bytes
      }
      if (text !== "") yield* writer.write(text)
      rows += batch.length
      const last = batch.at(-1)
      if (batch.length < limit || last === undefined) break
      after = Option.some(yield* Effect.orDie(decodeKey(last.key)))
      limit = Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor((limit * PAGE_BYTES) / Math.max(1, text.length))))
      yield* Effect.yieldNow()
    }
    return Option.some({ rows, fileBytes })
  })

/** One attempt at the whole archive; none when the lab changed under it. */
const attempt = (sql: SqlClient.SqlClient, backupId: string, labId: LabId, reading: Reading) =>
  Effect.gen(function* () {
    yield* clearChunks(sql, backupId)
    const tables = yield* reading.read(inBackground(labTables(sql)))
    const writer = yield* chunkWriter(sql, backupId)
    const header = {
      format: FORMAT,
      version: VERSION,
      labId,
      createdAt: new Date().toISOString(),
      tables: tables.map((t) => ({ name: t.name, columns: t.columns }))
    }
    yield* writer.write(`${JSON.stringify(header)}\n`)
    const counts: Record<string, number> = {}
    let rows = 0
    let fileBytes = 0
    for (const table of tables) {
      const dumped = yield* dumpTable(sql, writer, table, labId, reading)
      if (Option.isNone(dumped)) return Option.none<Dump>()
      counts[table.name] = dumped.value.rows
      rows += dumped.value.rows
      fileBytes += dumped.value.fileBytes
    }
    yield* writer.write(`${JSON.stringify({ end: true, rows: counts })}\n`)
    const stored = yield* writer.end
    return Option.some<Dump>({ ...stored, tables: counts, rows, fileBytes })
  })

/**
 * On PostgreSQL: one consistent snapshot, a REPEATABLE READ READ ONLY transaction on a connection of its own that
 * only reads (MVCC: nobody waits for it), the chunks written beside it in statements of their own.
 */
const inSnapshot = (sql: SqlClient.SqlClient, backupId: string, labId: LabId) =>
  Effect.scoped(
    Effect.gen(function* () {
      const connection = yield* sql.reserve
      // the ROLLBACK is in place before the BEGIN: the connection never goes back to the pool inside a transaction
      yield* Effect.addFinalizer(() => Effect.ignore(connection.executeUnprepared("ROLLBACK", [], undefined)))
      yield* connection.executeUnprepared("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", [], undefined)
      const read = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, SqlClient.TransactionConnection, [connection, 1] as const)
      const dump = yield* attempt(sql, backupId, labId, { read, since: Option.none() })
      if (Option.isNone(dump)) return yield* new ArchiveError({ message: "the lab changed under a snapshot" })
      return dump.value
    })
  )

/**
 * On embedded PGlite (one session: a transaction holds everyone): pages read in statements of their own, other
 * requests served between them. Such an archive is a snapshot only if no row it replaces on restore was written while
 * it was read: a row newer than the attempt's start (its xmin) starts it over; after STEP_ATTEMPTS, the last attempt
 * runs in one transaction, a consistent snapshot that holds the database meanwhile.
 */
const inSteps = (sql: SqlClient.SqlClient, backupId: string, labId: LabId) =>
  Effect.gen(function* () {
    for (let i = 0; i < STEP_ATTEMPTS; i++) {
      const [{ xid }] = yield* Effect.flatMap(inBackground(sql`SELECT (txid_current() % 4294967296)::text AS xid`), (rows) =>
        Effect.orDie(Schema.decodeUnknown(Schema.NonEmptyArray(Xid.value))(rows))
      )
      const dump = yield* attempt(sql, backupId, labId, { read: (effect) => effect, since: Option.some(xid) })
      if (Option.isSome(dump)) return dump.value
      yield* Effect.logInfo(`backup ${backupId}: the lab changed while it was read; starting over`)
    }
    const last = attempt(sql, backupId, labId, { read: (effect) => effect, since: Option.none() })
    const dump = yield* inBackground(
      Effect.zipRight(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`, last).pipe(sql.withTransaction)
    )
    if (Option.isNone(dump)) return yield* new ArchiveError({ message: "the lab changed under a snapshot" })
    return dump.value
  })

export class Archive extends Effect.Service<Archive>()("Archive", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const kind = yield* DatabaseKind
    return {
      labTables: Effect.orDie(labTables(sql)),
      /** Dump the lab into the backup's chunks (replacing any there); what was written. */
      dump: (backupId: string, labId: LabId): Effect.Effect<Dump, ArchiveError | SqlError> =>
        Effect.tapErrorCause(kind === "postgresql" ? inSnapshot(sql, backupId, labId) : inSteps(sql, backupId, labId), () =>
          Effect.ignore(clearChunks(sql, backupId))
        ),
      /** Read the backup's archive through, in short steps before anything changes: whole, its rows taken by the schema (RestoreCheck.ts). */
      check: (backupId: string, labId: LabId, sha256: string) => checkArchive(sql, backupId, labId, sha256),
      /** Check a checked archive can be applied and mark the lab, in the caller's transaction (RestoreCheck.ts). */
      mark: (labId: LabId, verified: Verified) => markRestore(sql, labId, verified),
      /** Put the archive's rows in the marked lab in short steps, from the start (RestoreApply.ts); the rows put back. */
      apply: (labId: LabId, verified: Verified, sha256: string) => applyRestore(sql, labId, verified, sha256)
    }
  })
}) {}
