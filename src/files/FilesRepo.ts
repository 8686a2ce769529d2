import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { File, FileSummary } from "./File.js"

const Row = Schema.typeSchema(File)
const SummaryRow = Schema.typeSchema(FileSummary)
type Fragment = Statement.Fragment
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

export class FilesRepo extends Effect.Service<FilesRepo>()("FilesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, path: Schema.String }),
      Result: Row,
      execute: ({ labId, path }) => sql`SELECT * FROM files WHERE lab_id = ${labId} AND path = ${path}`
    })

    /** The row, locked until the transaction ends. */
    const findForUpdate = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, path: Schema.String }),
      Result: Row,
      execute: ({ labId, path }) => sql`SELECT * FROM files WHERE lab_id = ${labId} AND path = ${path} FOR UPDATE`
    })

    const list = (labId: string, prefix: string, after: Option.Option<string>, limit: number) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT ${sql.literal(SUMMARY)} FROM files
          WHERE lab_id = ${labId}
            AND path >= ${prefix} AND starts_with(path, ${prefix})
            AND ${Option.match(after, { onNone: () => sql`TRUE`, onSome: (p) => sql`path > ${p}` })}
          ORDER BY path LIMIT ${limit + 1}`
        return yield* Schema.decodeUnknown(Schema.Array(SummaryRow))(rows)
      })

    /** A file where `path` needs a directory, or files below `path` where it needs a file. */
    const blocking = (labId: string, path: string) => {
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

    const upsert = (file: File) =>
      sql`INSERT INTO files ${sql.insert(file)}
          ON CONFLICT (lab_id, path) DO UPDATE SET
            content = EXCLUDED.content, size = EXCLUDED.size, sha = EXCLUDED.sha,
            source = EXCLUDED.source, updated_at = EXCLUDED.updated_at`

    const remove = (labId: string, path: string) => sql`DELETE FROM files WHERE lab_id = ${labId} AND path = ${path}`

    /** Sync: the state of these paths (missing paths are absent from the map). */
    const states = (labId: string, paths: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const out = new Map<string, StoredState>()
        for (let i = 0; i < paths.length; i += 5000) {
          const chunk = paths.slice(i, i + 5000)
          const rows = yield* sql<{ path: string; sha: string; fromGit: boolean }>`
            SELECT path, sha, from_git FROM files WHERE lab_id = ${labId} AND path = ANY (${chunk}::text[])`
          for (const row of rows) out.set(row.path, { sha: row.sha, fromGit: row.fromGit })
        }
        return out
      })

    /** Sync: the state of every file below a directory (`/` for all); one range scan, however many files there are. */
    const statesUnder = (labId: string, prefix: string) =>
      Effect.map(
        sql<{ path: string; sha: string; fromGit: boolean }>`
          SELECT path, sha, from_git FROM files WHERE lab_id = ${labId} AND path >= ${prefix} AND starts_with(path, ${prefix})`,
        (rows) => new Map(rows.map((row): [string, StoredState] => [row.path, { sha: row.sha, fromGit: row.fromGit }]))
      )

    /** A write of this path waits in the outbox: the pull leaves the path to it (it will be committed on top). */
    const NOT_PENDING = (labId: string, path: Fragment) =>
      sql`NOT EXISTS (SELECT 1 FROM outbox o WHERE o.lab_id = ${labId} AND o.path = ${path} AND o.set_aside_at IS NULL)`

    /**
     * Sync: store pulled files, each only if it is still as the pull read it (absent, or at `expected`) and no write
     * of it waits in the outbox: a write acknowledged after the pull read the path wins, whatever the interleaving.
     * One array per column (unnest): a statement has a few parameters however many rows it carries, which both
     * drivers bind faster than a VALUES list. Answers the paths added and updated.
     */
    const storePulled = (labId: string, files: ReadonlyArray<PulledFile>) =>
      Effect.gen(function* () {
        const added: Array<string> = []
        const updated: Array<string> = []
        for (const chunk of chunks(files, 2000)) {
          const fresh = chunk.filter((f) => f.expected === null).map((f) => f.file)
          const changed = chunk.filter((f) => f.expected !== null)
          if (fresh.length > 0) {
            const rows = yield* sql<{ path: string }>`
              INSERT INTO files (lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
              SELECT * FROM unnest(
                ${fresh.map((f) => f.labId)}::text[], ${fresh.map((f) => f.path)}::text[],
                ${fresh.map((f) => f.content)}::text[], ${fresh.map((f) => f.size)}::int[],
                ${fresh.map((f) => f.sha)}::text[], ${fresh.map((f) => f.source)}::text[],
                ${fresh.map((f) => f.fromGit)}::boolean[], ${fresh.map((f) => f.createdAt)}::timestamptz[],
                ${fresh.map((f) => f.updatedAt)}::timestamptz[]) AS n(lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
              WHERE ${NOT_PENDING(labId, sql`n.path`)}
              ON CONFLICT (lab_id, path) DO NOTHING
              RETURNING path`
            added.push(...rows.map((r) => r.path))
          }
          if (changed.length > 0) {
            const rows = yield* sql<{ path: string }>`
              UPDATE files f SET content = u.content, size = u.size, sha = u.sha, source = 'git', updated_at = u.updated_at
              FROM unnest(
                ${changed.map((c) => c.file.path)}::text[], ${changed.map((c) => c.file.content)}::text[],
                ${changed.map((c) => c.file.size)}::int[], ${changed.map((c) => c.file.sha)}::text[],
                ${changed.map((c) => c.expected ?? "")}::text[], ${changed.map((c) => c.file.updatedAt)}::timestamptz[]
              ) AS u(path, content, size, sha, expected, updated_at)
              WHERE f.lab_id = ${labId} AND f.path = u.path AND f.sha = u.expected AND ${NOT_PENDING(labId, sql`u.path`)}
              RETURNING f.path`
            updated.push(...rows.map((r) => r.path))
          }
        }
        return { added, updated }
      })

    /**
     * Sync: remove files git no longer has, each only if it came from git, is still at the blob the pull read, and no
     * write of it waits in the outbox (an acknowledged write or delete meanwhile is never undone). Answers the paths.
     */
    const removePulled = (labId: string, removals: ReadonlyArray<{ readonly path: string; readonly expected: string }>) =>
      Effect.map(
        Effect.forEach(
          chunks(removals, 5000),
          (chunk) =>
            sql<{ path: string }>`
              DELETE FROM files f USING unnest(${chunk.map((r) => r.path)}::text[], ${chunk.map((r) => r.expected)}::text[]) AS r(path, expected)
              WHERE f.lab_id = ${labId} AND f.path = r.path AND f.sha = r.expected AND f.from_git AND ${NOT_PENDING(labId, sql`r.path`)}
              RETURNING f.path`
        ),
        (rows) => rows.flat().map((r) => r.path)
      )

    /** Push: files whose write has landed in the repository (still at the blob pushed) are git files from now on. */
    const markPushed = (labId: string, pushed: ReadonlyArray<{ readonly path: string; readonly sha: string }>) =>
      Effect.forEach(
        chunks(pushed, 5000),
        (chunk) => sql`
          UPDATE files f SET from_git = true
          FROM unnest(${chunk.map((p) => p.path)}::text[], ${chunk.map((p) => p.sha)}::text[]) AS p(path, sha)
          WHERE f.lab_id = ${labId} AND f.path = p.path AND f.sha = p.sha AND NOT f.from_git`,
        { discard: true }
      )

    return {
      find: (labId: string, path: string) => Effect.orDie(find({ labId, path })),
      findForUpdate: (labId: string, path: string) => Effect.orDie(findForUpdate({ labId, path })),
      list: (labId: string, prefix: string, after: Option.Option<string>, limit: number) =>
        Effect.orDie(list(labId, prefix, after, limit)),
      blocking: (labId: string, path: string) => Effect.orDie(blocking(labId, path)),
      upsert: (file: File) => Effect.orDie(upsert(file)),
      remove: (labId: string, path: string) => Effect.orDie(remove(labId, path)),
      states: (labId: string, paths: ReadonlyArray<string>) => Effect.orDie(states(labId, paths)),
      statesUnder: (labId: string, prefix: string) => Effect.orDie(statesUnder(labId, prefix)),
      storePulled: (labId: string, files: ReadonlyArray<PulledFile>) => Effect.orDie(storePulled(labId, files)),
      removePulled: (labId: string, removals: ReadonlyArray<{ readonly path: string; readonly expected: string }>) =>
        Effect.orDie(removePulled(labId, removals)),
      markPushed: (labId: string, pushed: ReadonlyArray<{ readonly path: string; readonly sha: string }>) =>
        Effect.orDie(markPushed(labId, pushed))
    }
  })
}) {}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
