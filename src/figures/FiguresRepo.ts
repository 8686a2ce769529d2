import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { newId } from "../common/Ids.js"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import { Figure, FigureId, type FigureSource, type GitFigureFile, mediaTypeOf } from "./Figure.js"

const { commit: _commit, ...stored } = Figure.fields

/** A row of `figures`: the commit is stored as commit_sha (COMMIT is an SQL keyword). */
const Row = Schema.transform(Schema.typeSchema(Schema.Struct({ ...stored, commitSha: Schema.NullOr(Schema.String) })), Schema.typeSchema(Figure), {
  strict: true,
  decode: ({ commitSha, ...row }) => ({ ...row, commit: commitSha }),
  encode: ({ commit, ...figure }) => ({ ...figure, commitSha: commit })
})

const columns = ({ commit, ...figure }: Figure) => ({ ...figure, commitSha: commit })

export interface FigureFilter extends PageQuery {
  readonly source?: FigureSource | undefined
  readonly experimentId?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

const GitRow = Schema.Struct({ blobId: Schema.String, size: Schema.Number, commitSha: Schema.String })
const decodeGitRows = Schema.decodeUnknown(Schema.Array(GitRow))

/** A figure file the sync saw at `commit`, as a new git figure. */
const gitFigureAt = (labId: string, commit: string, now: Date) => (file: GitFigureFile): Figure => ({
  id: FigureId.make(newId("fig")),
  labId,
  source: "git",
  title: file.path.split("/").at(-1) ?? file.path,
  caption: null,
  path: file.path,
  url: null,
  mediaType: mediaTypeOf(file.path),
  size: file.size,
  blobId: file.oid,
  commit,
  experimentId: null,
  createdAt: now,
  updatedAt: now
})

/**
 * Sync: record figure files seen at `commit`. A new path is inserted; a known one is updated only when its blob
 * changed. Returns how many were added and how many changed.
 */
const upsertGit = (sql: SqlClient.SqlClient, labId: string, commit: string, found: ReadonlyArray<GitFigureFile>) =>
  Effect.gen(function* () {
    let added = 0
    let changed = 0
    const now = new Date()
    for (const chunk of chunks(found, 500)) {
      const figures = chunk.map(gitFigureAt(labId, commit, now))
      const fresh = new Set<string>(figures.map((f) => f.id))
      const written = yield* sql<{ id: string }>`
        INSERT INTO figures ${sql.insert(figures.map(columns))}
        ON CONFLICT (lab_id, path) WHERE source = 'git' DO UPDATE SET
          size = EXCLUDED.size, blob_id = EXCLUDED.blob_id, commit_sha = EXCLUDED.commit_sha,
          media_type = EXCLUDED.media_type, updated_at = EXCLUDED.updated_at
        WHERE figures.blob_id IS DISTINCT FROM EXCLUDED.blob_id
        RETURNING id`
      for (const row of written) {
        if (fresh.has(row.id)) added++
        else changed++
      }
    }
    return { added, changed }
  }).pipe(Effect.orDie)

/** Sync: forget figures whose files are gone from the repository; returns how many. */
const removeGit = (sql: SqlClient.SqlClient, labId: string, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    let removed = 0
    for (const chunk of chunks(paths, 1000)) {
      const rows = yield* sql<{ id: string }>`
        DELETE FROM figures WHERE lab_id = ${labId} AND source = 'git' AND path IN ${sql.in(chunk)} RETURNING id`
      removed += rows.length
    }
    return removed
  }).pipe(Effect.orDie)

/** Sync: the paths of git figures below a directory (`/` for all). */
const gitPathsUnder = (sql: SqlClient.SqlClient, labId: string, prefix: string) =>
  Effect.map(
    Effect.orDie(sql<{ path: string }>`SELECT path FROM figures WHERE lab_id = ${labId} AND source = 'git' AND starts_with(path, ${prefix})`),
    (rows) => rows.map((r) => r.path)
  )

/** A binary figure pulled from git at this lab path (the publish loop counts it as a file of the lab). */
const gitFigure = (sql: SqlClient.SqlClient, labId: string, path: string) =>
  Effect.gen(function* () {
    const rows = yield* sql`SELECT blob_id, size, commit_sha FROM figures WHERE lab_id = ${labId} AND source = 'git' AND path = ${path}`
    return Option.fromNullable((yield* decodeGitRows(rows))[0])
  }).pipe(Effect.orDie)

/**
 * The lab's figures. The sync's operations (upsertGit, removeGit, gitPathsUnder, gitFigure) take the lab as a
 * plain string: they run on labs the service read from its own rows (a pull, a publish), outside any request.
 */
export class FiguresRepo extends Effect.Service<FiguresRepo>()("FiguresRepo", {
  effect: Effect.map(makeLabTable({ table: "figures", row: Row, columns }), (table) => ({
    ...table,
    list: table.listBy((where, filter: FigureFilter) => [
      where.eq("source", filter.source),
      where.eq("experiment_id", filter.experimentId),
      where.created(filter)
    ]),
    gitFigure: (labId: string, path: string) => gitFigure(table.sql, labId, path),
    upsertGit: (labId: string, commit: string, found: ReadonlyArray<GitFigureFile>) => upsertGit(table.sql, labId, commit, found),
    removeGit: (labId: string, paths: ReadonlyArray<string>) => removeGit(table.sql, labId, paths),
    gitPathsUnder: (labId: string, prefix: string) => gitPathsUnder(table.sql, labId, prefix)
  }))
}) {}
