import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import type { LabId } from "../labs/LabId.js"
import { File, FileSummary } from "./File.js"

const decodeFiles = Schema.decodeUnknown(Schema.Array(Schema.typeSchema(File)))
const decodeSummaries = Schema.decodeUnknown(Schema.Array(Schema.typeSchema(FileSummary)))
type Fragment = Statement.Fragment
type Sql = SqlClient.SqlClient
const SUMMARY = "lab_id, path, size, sha, source, from_git, created_at, updated_at"

/** A file a pull stores, and the blob the path had when the pull read it (null: it was absent). */
export interface PulledFile {
  readonly file: File
  readonly expected: string | null
}

/** What a sync needs to know of a stored file. */
export interface StoredState {
  readonly sha: string
  readonly fromGit: boolean
}

/** A path a pull removes, and the blob it had when the pull read it. */
export interface PulledRemoval {
  readonly path: string
  readonly expected: string
}

/** The file at this path; `lock`: locked until the transaction ends. */
const findFile = (sql: Sql, labId: string, path: string, lock: boolean) =>
  Effect.flatMap(
    sql`SELECT * FROM files WHERE lab_id = ${labId} AND path = ${path} ${sql.literal(lock ? "FOR UPDATE" : "")}`,
    (rows) => Effect.map(decodeFiles(rows.slice(0, 1)), (found) => Option.fromNullable(found[0]))
  )

/** One page of the files below `prefix`, by path, after `after`; one row more than `limit` when there are more. */
const listFiles = (sql: Sql, labId: LabId, prefix: string, after: Option.Option<string>, limit: number) =>
  Effect.flatMap(
    sql`
      SELECT ${sql.literal(SUMMARY)} FROM files
      WHERE lab_id = ${labId}
        AND path >= ${prefix} AND starts_with(path, ${prefix})
        AND ${Option.match(after, { onNone: () => sql`TRUE`, onSome: (p) => sql`path > ${p}` })}
      ORDER BY path LIMIT ${limit + 1}`,
    decodeSummaries
  )

/** A file where `path` needs a directory, or files below `path` where it needs a file. */
const blockingFile = (sql: Sql, labId: LabId, path: string) => {
  const ancestors = path
    .split("/")
    .slice(1, -1)
    .map((_, i, parts) => `/${parts.slice(0, i + 1).join("/")}`)
  return Effect.map(
    sql<{ path: string }>`
      SELECT path FROM files WHERE lab_id = ${labId}
        AND (${ancestors.length > 0 ? sql`path IN ${sql.in(ancestors)}` : sql`FALSE`} OR starts_with(path, ${`${path}/`}))
      LIMIT 1`,
    (rows) => Option.fromNullable(rows[0]?.path)
  )
}

const upsertFile = (sql: Sql, file: File) =>
  sql`INSERT INTO files ${sql.insert(file)}
      ON CONFLICT (lab_id, path) DO UPDATE SET
        content = EXCLUDED.content, size = EXCLUDED.size, sha = EXCLUDED.sha,
        source = EXCLUDED.source, updated_at = EXCLUDED.updated_at`

const storedState = (row: { path: string; sha: string; fromGit: boolean }): [string, StoredState] => [
  row.path,
  { sha: row.sha, fromGit: row.fromGit }
]

/** Sync: the state of these paths (missing paths are absent from the map). */
const statesOf = (sql: Sql, labId: string, paths: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(
      chunks(paths, 5000),
      (chunk) => sql<{ path: string; sha: string; fromGit: boolean }>`
        SELECT path, sha, from_git FROM files WHERE lab_id = ${labId} AND path = ANY (${chunk}::text[])`
    ),
    (rows) => new Map(rows.flat().map(storedState))
  )

/** Sync: the state of every file below a directory (`/` for all); one range scan, however many files there are. */
const statesBelow = (sql: Sql, labId: string, prefix: string) =>
  Effect.map(
    sql<{ path: string; sha: string; fromGit: boolean }>`
      SELECT path, sha, from_git FROM files WHERE lab_id = ${labId} AND path >= ${prefix} AND starts_with(path, ${prefix})`,
    (rows) => new Map(rows.map(storedState))
  )

/** A write of this path waits in the outbox: the pull leaves the path to it (it will be committed on top). */
const notPending = (sql: Sql, labId: string, path: Fragment) =>
  sql`NOT EXISTS (SELECT 1 FROM outbox o WHERE o.lab_id = ${labId} AND o.path = ${path} AND o.set_aside_at IS NULL)`

/** Pulled files the lab did not have: inserted unless a write of the path waits in the outbox; answers the paths. */
const insertPulled = (sql: Sql, labId: string, fresh: ReadonlyArray<File>) =>
  sql<{ path: string }>`
    INSERT INTO files (lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
    SELECT * FROM unnest(
      ${fresh.map((f) => f.labId)}::text[], ${fresh.map((f) => f.path)}::text[],
      ${fresh.map((f) => f.content)}::text[], ${fresh.map((f) => f.size)}::int[],
      ${fresh.map((f) => f.sha)}::text[], ${fresh.map((f) => f.source)}::text[],
      ${fresh.map((f) => f.fromGit)}::boolean[], ${fresh.map((f) => f.createdAt)}::timestamptz[],
      ${fresh.map((f) => f.updatedAt)}::timestamptz[]) AS n(lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
    WHERE ${notPending(sql, labId, sql`n.path`)}
    ON CONFLICT (lab_id, path) DO NOTHING
    RETURNING path`

/** Pulled files the lab had: updated if still at the blob the pull read and no write of them waits; answers the paths. */
const updatePulled = (sql: Sql, labId: string, changed: ReadonlyArray<PulledFile>) =>
  sql<{ path: string }>`
    UPDATE files f SET content = u.content, size = u.size, sha = u.sha, source = 'git', updated_at = u.updated_at
    FROM unnest(
      ${changed.map((c) => c.file.path)}::text[], ${changed.map((c) => c.file.content)}::text[],
      ${changed.map((c) => c.file.size)}::int[], ${changed.map((c) => c.file.sha)}::text[],
      ${changed.map((c) => c.expected ?? "")}::text[], ${changed.map((c) => c.file.updatedAt)}::timestamptz[]
    ) AS u(path, content, size, sha, expected, updated_at)
    WHERE f.lab_id = ${labId} AND f.path = u.path AND f.sha = u.expected AND ${notPending(sql, labId, sql`u.path`)}
    RETURNING f.path`

/**
 * Sync: store pulled files, each only if it is still as the pull read it (absent, or at `expected`) and no write
 * of it waits in the outbox: a write acknowledged after the pull read the path wins, whatever the interleaving.
 * One array per column (unnest): a statement has a few parameters however many rows it carries, which both
 * drivers bind faster than a VALUES list. Answers the paths added and updated.
 */
const storePulledFiles = (sql: Sql, labId: string, files: ReadonlyArray<PulledFile>) =>
  Effect.gen(function* () {
    const added: Array<string> = []
    const updated: Array<string> = []
    for (const chunk of chunks(files, 2000)) {
      const fresh = chunk.filter((f) => f.expected === null).map((f) => f.file)
      const changed = chunk.filter((f) => f.expected !== null)
      if (fresh.length > 0) added.push(...(yield* insertPulled(sql, labId, fresh)).map((r) => r.path))
      if (changed.length > 0) updated.push(...(yield* updatePulled(sql, labId, changed)).map((r) => r.path))
    }
    return { added, updated }
  })

/**
 * Sync: remove files git no longer has, each only if it came from git, is still at the blob the pull read, and no
 * write of it waits in the outbox (an acknowledged write or delete meanwhile is never undone). Answers the paths.
 */
const removePulledFiles = (sql: Sql, labId: string, removals: ReadonlyArray<PulledRemoval>) =>
  Effect.map(
    Effect.forEach(
      chunks(removals, 5000),
      (chunk) =>
        sql<{ path: string }>`
          DELETE FROM files f USING unnest(${chunk.map((r) => r.path)}::text[], ${chunk.map((r) => r.expected)}::text[]) AS r(path, expected)
          WHERE f.lab_id = ${labId} AND f.path = r.path AND f.sha = r.expected AND f.from_git AND ${notPending(sql, labId, sql`r.path`)}
          RETURNING f.path`
    ),
    (rows) => rows.flat().map((r) => r.path)
  )

/** Push: files whose write has landed in the repository (still at the blob pushed) are git files from now on. */
const markPushedFiles = (sql: Sql, labId: string, pushed: ReadonlyArray<{ readonly path: string; readonly sha: string }>) =>
  Effect.forEach(
    chunks(pushed, 5000),
    (chunk) => sql`
      UPDATE files f SET from_git = true
      FROM unnest(${chunk.map((p) => p.path)}::text[], ${chunk.map((p) => p.sha)}::text[]) AS p(path, sha)
      WHERE f.lab_id = ${labId} AND f.path = p.path AND f.sha = p.sha AND NOT f.from_git`,
    { discard: true }
  )

/**
 * A lab's files, keyed by (lab, path). What the files service uses takes a checked LabId; what the sync engine and
 * the paper publisher use (they work on labs of the service's own rows) takes the lab id as they hold it.
 */
export class FilesRepo extends Effect.Service<FilesRepo>()("FilesRepo", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    find: (labId: string, path: string) => Effect.orDie(findFile(sql, labId, path, false)),
    /** The row, locked until the transaction ends. */
    findForUpdate: (labId: LabId, path: string) => Effect.orDie(findFile(sql, labId, path, true)),
    list: (labId: LabId, prefix: string, after: Option.Option<string>, limit: number) =>
      Effect.orDie(listFiles(sql, labId, prefix, after, limit)),
    blocking: (labId: LabId, path: string) => Effect.orDie(blockingFile(sql, labId, path)),
    upsert: (file: File) => Effect.orDie(upsertFile(sql, file)),
    remove: (labId: LabId, path: string) => Effect.orDie(sql`DELETE FROM files WHERE lab_id = ${labId} AND path = ${path}`),
    states: (labId: string, paths: ReadonlyArray<string>) => Effect.orDie(statesOf(sql, labId, paths)),
    statesUnder: (labId: string, prefix: string) => Effect.orDie(statesBelow(sql, labId, prefix)),
    storePulled: (labId: string, files: ReadonlyArray<PulledFile>) => Effect.orDie(storePulledFiles(sql, labId, files)),
    removePulled: (labId: string, removals: ReadonlyArray<PulledRemoval>) => Effect.orDie(removePulledFiles(sql, labId, removals)),
    markPushed: (labId: string, pushed: ReadonlyArray<{ readonly path: string; readonly sha: string }>) =>
      Effect.orDie(markPushedFiles(sql, labId, pushed))
  }))
}) {}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
