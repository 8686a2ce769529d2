import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Option, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import { foreignKeyOrder, GzipSink, gunzipLines } from "./ArchiveFormat.js"

/**
 * A lab's snapshot, generic over the schema: every table with a `lab_id` column
 * (found in information_schema when the backup runs, so tables added by any
 * feature are covered), its rows for the lab as JSON (row_to_json), as gzip'd
 * NDJSON:
 *
 *   {"format":"lab-service-backup","version":1,"labId":…,"createdAt":…,"tables":[{"name":…,"columns":[…]}…]}
 *   {"table":"tasks","row":{…}}            one line per row, tables in foreign-key order
 *   {"end":true,"rows":{"tasks":12,…}}     the trailer: a truncated archive has none
 */
export { foreignKeyOrder } from "./ArchiveFormat.js"

export const FORMAT = "lab-service-backup"
export const VERSION = 1

/** Tables with a lab_id that are not part of a lab's snapshot, and why. */
export const EXCLUDED_TABLES: Readonly<Record<string, string>> = {
  backups: "the archives themselves: a backup inside a backup would grow without end, and a restore must not undo its own record",
  outbox: "queued pushes to the linked repository: replaying old ones would commit stale content; the queue is transport, not lab content",
  webhook_deliveries: "the dedupe log of git host deliveries: transport state that only says which deliveries were already seen",
  search_documents: "derived: the search index is rebuilt by its triggers as the restored rows are inserted",
  search_queue: "derived: the records waiting to be indexed, queued again by their triggers as the restored rows are inserted",
  lab_usage: "derived: the lab's stored bytes, kept by triggers on files as the restored rows are deleted and inserted"
}

/**
 * How a restore treats a table; every other archived table is replaced (the
 * lab's rows deleted, the archived rows inserted).
 * - merge: append-only history of what really happened (who did what, the
 *   stretches pods really ran and were billed for). The archived rows are put
 *   back next to the rows written since, so the history, the restore itself
 *   included, survives.
 * - keep: live infrastructure. Pods are processes (or cloud machines) that run
 *   or not whatever the database says: a restore neither starts nor stops
 *   compute, so pods stay as they are. They are still in the archive.
 */
export const RESTORE_POLICY: Readonly<Record<string, "merge" | "keep">> = {
  activity: "merge",
  pod_sessions: "merge",
  pods: "keep"
}

/**
 * The experiments scheduler's per-lab lock (src/experiments/Scheduler.ts): held
 * by a restore so no queued experiment is started on a pod mid-restore.
 */
const schedulerLock = (labId: string) => `experiments:${labId}`

/** Rows per FETCH while dumping; rows (and bytes) per statement while staging a restore. */
const FETCH_ROWS = 500
const STAGE_ROWS = 500
const STAGE_BYTES = 4 * 1024 * 1024

export class ArchiveError extends Data.TaggedError("ArchiveError")<{ readonly message: string }> {}

export interface LabTable {
  readonly name: string
  /** Every column, in table order. */
  readonly columns: ReadonlyArray<string>
  /** Columns an INSERT may set (not GENERATED ALWAYS AS (…) STORED). */
  readonly insertable: ReadonlyArray<string>
}

export interface Dump {
  readonly archive: Uint8Array
  readonly sha256: string
  readonly tables: Record<string, number>
  readonly rows: number
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`

const Header = Schema.Struct({
  format: Schema.Literal(FORMAT),
  version: Schema.Literal(VERSION),
  labId: Schema.String,
  createdAt: Schema.String,
  tables: Schema.Array(Schema.Struct({ name: Schema.String, columns: Schema.Array(Schema.String) }))
})
const Trailer = Schema.Struct({ end: Schema.Literal(true), rows: Schema.Record({ key: Schema.String, value: Schema.Number }) })
const decodeTrailer = Schema.decodeUnknownOption(Schema.parseJson(Trailer))
const ROW_PREFIX = '{"table":'
const decodeHeader = Schema.decodeUnknownOption(Schema.parseJson(Header))

const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new ArchiveError({ message: `${what}: ${String(cause)}` }) })

export class Archive extends Effect.Service<Archive>()("Archive", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The tables a snapshot covers, parents before children (foreign keys within the schema). */
    const labTables = Effect.gen(function* () {
      const columns = yield* sql<{ tableName: string; columnName: string; isGenerated: string }>`
        SELECT c.table_name, c.column_name, c.is_generated
        FROM information_schema.columns c
        JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
          AND EXISTS (
            SELECT 1 FROM information_schema.columns l
            WHERE l.table_schema = c.table_schema AND l.table_name = c.table_name AND l.column_name = 'lab_id'
          )
        ORDER BY c.table_name, c.ordinal_position`
      const edges = yield* sql<{ child: string; parent: string }>`
        SELECT child.relname AS child, parent.relname AS parent
        FROM pg_constraint k
        JOIN pg_class child ON child.oid = k.conrelid
        JOIN pg_class parent ON parent.oid = k.confrelid
        JOIN pg_namespace n ON n.oid = child.relnamespace
        WHERE k.contype = 'f' AND n.nspname = current_schema()`
      const byTable = new Map<string, { columns: Array<string>; insertable: Array<string> }>()
      for (const c of columns) {
        if (c.tableName in EXCLUDED_TABLES) continue
        const entry = byTable.get(c.tableName) ?? { columns: [], insertable: [] }
        entry.columns.push(c.columnName)
        if (c.isGenerated !== "ALWAYS") entry.insertable.push(c.columnName)
        byTable.set(c.tableName, entry)
      }
      return foreignKeyOrder([...byTable.keys()], edges).map((name): LabTable => {
        const entry = byTable.get(name) ?? { columns: [], insertable: [] }
        return { name, columns: entry.columns, insertable: entry.insertable }
      })
    })

    /**
     * Dump the lab: one consistent snapshot (REPEATABLE READ) read through a
     * cursor per table, so memory holds one batch of rows plus the compressed output.
     */
    const dump = (labId: string) =>
      Effect.gen(function* () {
        yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`
        const tables = yield* labTables
        const sink = new GzipSink()
        const header = {
          format: FORMAT,
          version: VERSION,
          labId,
          createdAt: new Date().toISOString(),
          tables: tables.map((t) => ({ name: t.name, columns: t.columns }))
        }
        yield* io("writing the archive", () => sink.write(`${JSON.stringify(header)}\n`))
        const counts: Record<string, number> = {}
        let rows = 0
        for (const table of tables) {
          const prefix = `${ROW_PREFIX}${JSON.stringify(table.name)},"row":`
          counts[table.name] = 0
          yield* sql`DECLARE backup_rows NO SCROLL CURSOR FOR
            SELECT row_to_json(t)::text AS row FROM ${sql.literal(quote(table.name))} t WHERE t.lab_id = ${labId}`
          for (;;) {
            const batch = yield* sql<{ row: string }>`FETCH ${sql.literal(String(FETCH_ROWS))} FROM backup_rows`
            if (batch.length === 0) break
            const text = batch.map((r) => `${prefix}${r.row}}\n`).join("")
            yield* io("writing the archive", () => sink.write(text))
            counts[table.name] = (counts[table.name] ?? 0) + batch.length
            rows += batch.length
            if (batch.length < FETCH_ROWS) break
          }
          yield* sql`CLOSE backup_rows`
        }
        yield* io("writing the archive", () => sink.write(`${JSON.stringify({ end: true, rows: counts })}\n`))
        const archive = yield* io("compressing the archive", () => sink.end())
        const dump: Dump = { archive, sha256: createHash("sha256").update(archive).digest("hex"), tables: counts, rows }
        return dump
      }).pipe(sql.withTransaction)

    /** The archive's lines, decompressed as they are read (a gzip error fails the stream). */
    const lines = (archive: Uint8Array) =>
      Stream.suspend(() =>
        Stream.fromAsyncIterable(
          gunzipLines(archive),
          (cause) => new ArchiveError({ message: `the archive cannot be read: ${cause instanceof Error ? cause.message : String(cause)}` })
        )
      )

    /**
     * Put the lab back as archived, in the caller's transaction: stage the
     * archived rows in a temporary table, delete the lab's rows of the replaced
     * tables (children first), insert the archived ones (parents first) with
     * json_populate_record, each table in one statement so rows referencing
     * rows of the same table are fine; merged tables get their archived rows
     * back next to the newer ones, kept tables are not touched (RESTORE_POLICY).
     * Tables created after the backup are left alone; columns added since get
     * their defaults. Returns the rows put back.
     */
    const restore = (labId: string, archive: Uint8Array, sha256: string): Effect.Effect<number, ArchiveError | SqlError> =>
      Effect.gen(function* () {
        if (createHash("sha256").update(archive).digest("hex") !== sha256) {
          return yield* new ArchiveError({ message: "the archive does not match its SHA-256: it is corrupt" })
        }
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${schedulerLock(labId)}))`
        yield* sql`SET CONSTRAINTS ALL DEFERRED`
        yield* sql`CREATE TEMPORARY TABLE restore_rows (tbl text NOT NULL, row json NOT NULL) ON COMMIT DROP`

        const state: {
          header: Option.Option<typeof Header.Type>
          trailer: Option.Option<typeof Trailer.Type>
          pending: Array<string>
          bytes: number
        } = { header: Option.none(), trailer: Option.none(), pending: [], bytes: 0 }
        const flush = Effect.suspend(() => {
          if (state.pending.length === 0) return Effect.void
          const batch = `[${state.pending.join(",")}]`
          state.pending = []
          state.bytes = 0
          return Effect.asVoid(sql`INSERT INTO restore_rows (tbl, row)
            SELECT x->>'table', x->'row' FROM json_array_elements(${batch}::json) x`)
        })

        yield* Stream.runForEach(lines(archive), (line) =>
          Effect.gen(function* () {
            if (line === "") return
            if (Option.isNone(state.header)) {
              const header = decodeHeader(line)
              if (Option.isNone(header) || header.value.labId !== labId) {
                return yield* new ArchiveError({ message: "the archive is not a backup of this lab in a known format" })
              }
              state.header = header
              return
            }
            if (Option.isSome(state.trailer)) return yield* new ArchiveError({ message: "the archive has data after its end" })
            // rows are staged as they are (the database parses them); anything else must be the trailer
            if (line.startsWith(ROW_PREFIX)) {
              state.pending.push(line)
              state.bytes += line.length
              if (state.pending.length >= STAGE_ROWS || state.bytes >= STAGE_BYTES) yield* flush
              return
            }
            const trailer = decodeTrailer(line)
            if (Option.isNone(trailer)) return yield* new ArchiveError({ message: "the archive has a line that is neither a row nor its end" })
            state.trailer = trailer
          })
        )
        yield* flush
        const header = state.header
        const trailer = state.trailer
        if (Option.isNone(header) || Option.isNone(trailer)) {
          return yield* new ArchiveError({ message: "the archive is truncated" })
        }
        const archived = new Map(header.value.tables.map((t) => [t.name, t.columns]))
        const expected = trailer.value.rows
        const current = (yield* labTables).filter((t) => archived.has(t.name))
        const missing = [...archived.keys()].filter((name) => !(name in EXCLUDED_TABLES) && !current.some((t) => t.name === name))
        if (missing.length > 0) {
          return yield* new ArchiveError({ message: `the archive has tables this schema no longer has: ${missing.join(", ")}` })
        }

        const replaced = current.filter((t) => RESTORE_POLICY[t.name] === undefined)
        for (const table of [...replaced].reverse()) {
          yield* sql`DELETE FROM ${sql.literal(quote(table.name))} WHERE lab_id = ${labId}`
        }
        let restored = 0
        for (const table of current) {
          const policy = RESTORE_POLICY[table.name]
          if (policy === "keep") continue
          const had = new Set(archived.get(table.name) ?? [])
          const columns = table.insertable.filter((c) => had.has(c))
          const target = columns.map(quote).join(", ")
          const source = columns.map((c) => `p.${quote(c)}`).join(", ")
          const merge = policy === "merge"
          const inserted = yield* sql<{ n: number }>`
            WITH put AS (
              INSERT INTO ${sql.literal(quote(table.name))} (${sql.literal(target)}) OVERRIDING SYSTEM VALUE
              SELECT ${sql.literal(source)}
              FROM restore_rows r, json_populate_record(NULL::${sql.literal(quote(table.name))}, r.row) p
              WHERE r.tbl = ${table.name} AND p.lab_id = ${labId}
              ${sql.literal(merge ? "ON CONFLICT DO NOTHING" : "")}
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM put`
          const n = inserted[0]?.n ?? 0
          if (!merge && n !== (expected[table.name] ?? 0)) {
            return yield* new ArchiveError({
              message: `${table.name}: ${n} rows put back of the ${expected[table.name] ?? 0} archived`
            })
          }
          restored += n
        }
        yield* sql`DROP TABLE restore_rows`
        return restored
      })

    return {
      labTables: Effect.orDie(labTables),
      dump: (labId: string): Effect.Effect<Dump, ArchiveError | SqlError> => dump(labId),
      restore
    }
  })
}) {}
