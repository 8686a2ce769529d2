import type * as SqlClient from "@effect/sql/SqlClient"
import { Data, Effect, Schema } from "effect"
import { foreignKeyOrder } from "./ArchiveFormat.js"

/** What the dump and the restore of an archive share: its lines, the tables it covers, how a restore treats them. */

export const FORMAT = "lab-service-backup"
export const VERSION = 1

/** Tables with a lab_id that are not part of a lab's snapshot, and why. */
export const EXCLUDED_TABLES: Readonly<Record<string, string>> = {
  backups: "the archives themselves: a backup inside a backup would grow without end, and a restore must not undo its own record",
  outbox: "queued pushes to the linked repository: replaying old ones would commit stale content; the queue is transport, not lab content",
  webhook_deliveries: "the dedupe log of git host deliveries: transport state that only says which deliveries were already seen",
  search_documents: "derived: the search index is rebuilt by its triggers as the restored rows are inserted",
  search_queue: "derived: the records waiting to be indexed, queued again by their triggers as the restored rows are inserted",
  lab_usage: "derived: the lab's stored bytes, kept by triggers on files as the restored rows are deleted and inserted",
  lab_restores: "the mark of a restore in progress (migration 15): a restore must not put back or remove its own mark"
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

export class ArchiveError extends Data.TaggedError("ArchiveError")<{ readonly message: string }> {}

/**
 * The order a dump reads a table's rows of a lab in, page after page: the columns of an index on (lab_id, …) that
 * holds the primary key (so the order is total and each page is a range of that index), else the primary key, else
 * the row's physical address (ctid). Each with its type, to read a page's last key back as a parameter.
 */
export interface KeyOrder {
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  readonly descending: boolean
}

export interface LabTable {
  readonly name: string
  /** Every column, in table order. */
  readonly columns: ReadonlyArray<string>
  /** Columns an INSERT may set (not GENERATED ALWAYS AS (…) STORED). */
  readonly insertable: ReadonlyArray<string>
  readonly key: KeyOrder
}

/** What a dump wrote: the archive's size and checksum, and what it holds. */
export interface Dump {
  readonly size: number
  readonly sha256: string
  readonly tables: Record<string, number>
  readonly rows: number
  /** Bytes of the lab's files archived (what the stored-bytes quota counts of them). */
  readonly fileBytes: number
}

export const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`

export const Header = Schema.Struct({
  format: Schema.Literal(FORMAT),
  version: Schema.Literal(VERSION),
  labId: Schema.String,
  createdAt: Schema.String,
  tables: Schema.Array(Schema.Struct({ name: Schema.String, columns: Schema.Array(Schema.String) }))
})
export const Trailer = Schema.Struct({ end: Schema.Literal(true), rows: Schema.Record({ key: Schema.String, value: Schema.Number }) })
export const decodeTrailer = Schema.decodeUnknownOption(Schema.parseJson(Trailer))
export const ROW_PREFIX = '{"table":'
export const decodeHeader = Schema.decodeUnknownOption(Schema.parseJson(Header))

const Strings = Schema.parseJson(Schema.Array(Schema.String))
const Booleans = Schema.parseJson(Schema.Array(Schema.Boolean))
const Index = Schema.Struct({
  tableName: Schema.String,
  isPrimary: Schema.Boolean,
  columns: Strings,
  descending: Booleans,
  types: Strings,
  notNull: Booleans
})
const decodeIndexes = Schema.decodeUnknown(Schema.Array(Index))

/** See KeyOrder: the shortest usable index on (lab_id, …, the primary key), else the primary key, else ctid. */
const keyOrder = (indexes: ReadonlyArray<typeof Index.Type>): KeyOrder => {
  const primary = indexes.find((x) => x.isPrimary)
  const column = (x: typeof Index.Type, i: number) => ({ name: x.columns[i] ?? "", type: x.types[i] ?? "" })
  const usable = indexes
    .filter((x) => primary !== undefined && x.columns[0] === "lab_id" && primary.columns.every((c) => x.columns.includes(c)))
    .filter((x) => x.notNull.every(Boolean) && x.columns.length > 1 && x.descending.slice(1).every((d) => d === x.descending[1]))
    .sort((a, b) => a.columns.length - b.columns.length)[0]
  if (usable !== undefined) {
    return { columns: usable.columns.slice(1).map((_, i) => column(usable, i + 1)), descending: usable.descending[1] === true }
  }
  if (primary !== undefined) return { columns: primary.columns.map((_, i) => column(primary, i)), descending: false }
  return { columns: [{ name: "ctid", type: "tid" }], descending: false }
}

/** The tables a snapshot covers, parents before children (foreign keys within the schema). */
export const labTables = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
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
    const indexes = yield* Effect.flatMap(
      sql`
      SELECT c.relname AS table_name, x.indisprimary AS is_primary,
        json_agg(a.attname ORDER BY k.ord)::text AS columns,
        json_agg((o.opt & 1) = 1 ORDER BY k.ord)::text AS descending,
        json_agg(format_type(a.atttypid, a.atttypmod) ORDER BY k.ord)::text AS types,
        json_agg(a.attnotnull ORDER BY k.ord)::text AS not_null
      FROM pg_index x
      JOIN pg_class c ON c.oid = x.indrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_am m ON m.oid = i.relam AND m.amname = 'btree'
      CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
      JOIN LATERAL unnest(x.indoption::int2[]) WITH ORDINALITY AS o(opt, ord) ON o.ord = k.ord
      JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
      WHERE n.nspname = current_schema() AND x.indpred IS NULL AND x.indexprs IS NULL AND x.indisvalid
      GROUP BY c.relname, x.indexrelid, x.indisprimary`,
      (rows) => Effect.orDie(decodeIndexes(rows))
    )
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
      return { name, columns: entry.columns, insertable: entry.insertable, key: keyOrder(indexes.filter((x) => x.tableName === name)) }
    })
  })
