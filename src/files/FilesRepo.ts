import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { File, FileSummary } from "./File.js"

const Row = Schema.typeSchema(File)
const SummaryRow = Schema.typeSchema(FileSummary)
const SUMMARY = "lab_id, path, size, sha, source, from_git, created_at, updated_at"

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

    /**
     * Sync: write many files at once, in chunks. One array per column (unnest): a statement has nine parameters
     * however many rows it carries, which both drivers bind faster than a VALUES list of nine per row.
     */
    const upsertMany = (files: ReadonlyArray<File>) =>
      Effect.forEach(
        chunks(files, 2000),
        (chunk) =>
          sql`INSERT INTO files (lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
              SELECT * FROM unnest(
                ${chunk.map((f) => f.labId)}::text[], ${chunk.map((f) => f.path)}::text[],
                ${chunk.map((f) => f.content)}::text[], ${chunk.map((f) => f.size)}::int[],
                ${chunk.map((f) => f.sha)}::text[], ${chunk.map((f) => f.source)}::text[],
                ${chunk.map((f) => f.fromGit)}::boolean[], ${chunk.map((f) => f.createdAt)}::timestamptz[],
                ${chunk.map((f) => f.updatedAt)}::timestamptz[])
              ON CONFLICT (lab_id, path) DO UPDATE SET
                content = EXCLUDED.content, size = EXCLUDED.size, sha = EXCLUDED.sha,
                source = EXCLUDED.source, updated_at = EXCLUDED.updated_at`,
        { discard: true }
      )

    const removeMany = (labId: string, paths: ReadonlyArray<string>) =>
      Effect.forEach(
        chunks(paths, 5000),
        (chunk) => sql`DELETE FROM files WHERE lab_id = ${labId} AND path = ANY (${chunk}::text[])`,
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
      upsertMany: (files: ReadonlyArray<File>) => Effect.orDie(upsertMany(files)),
      removeMany: (labId: string, paths: ReadonlyArray<string>) => Effect.orDie(removeMany(labId, paths))
    }
  })
}) {}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
