import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { LabId } from "../labs/LabId.js"
import { GzipSink } from "./ArchiveFormat.js"
import { restoreLab } from "./ArchiveRestore.js"
import { ArchiveError, type Dump, FORMAT, labTables, quote, ROW_PREFIX, VERSION } from "./ArchiveSchema.js"

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
 * The restore is ArchiveRestore.ts; what both share is ArchiveSchema.ts.
 */
export { foreignKeyOrder } from "./ArchiveFormat.js"
export {
  ArchiveError,
  type Dump,
  EXCLUDED_TABLES,
  FORMAT,
  type LabTable,
  RESTORE_POLICY,
  VERSION
} from "./ArchiveSchema.js"

/** Rows per FETCH while dumping. */
const FETCH_ROWS = 500

const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new ArchiveError({ message: `${what}: ${String(cause)}` }) })

/**
 * Dump the lab: one consistent snapshot (REPEATABLE READ) read through a
 * cursor per table, so memory holds one batch of rows plus the compressed output.
 */
const dump = (sql: SqlClient.SqlClient, labId: LabId) =>
  Effect.gen(function* () {
    yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`
    const tables = yield* labTables(sql)
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

export class Archive extends Effect.Service<Archive>()("Archive", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    labTables: Effect.orDie(labTables(sql)),
    dump: (labId: LabId): Effect.Effect<Dump, ArchiveError | SqlError> => dump(sql, labId),
    /** Put the lab back as archived, in the caller's transaction (ArchiveRestore.ts); the rows put back. */
    restore: (labId: LabId, archive: Uint8Array, sha256: string) => restoreLab(sql, labId, archive, sha256)
  }))
}) {}
