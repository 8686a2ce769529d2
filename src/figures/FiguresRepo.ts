import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { newId } from "../common/Ids.js"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { type Figure, FigureSource, type GitFigureFile, mediaTypeOf } from "./Figure.js"

/** A row of `figures`; the commit is stored as commit_sha (COMMIT is an SQL keyword). */
const Row = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  source: FigureSource,
  title: Schema.String,
  caption: Schema.NullOr(Schema.String),
  path: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  mediaType: Schema.NullOr(Schema.String),
  size: Schema.NullOr(Schema.Number),
  blobId: Schema.NullOr(Schema.String),
  commitSha: Schema.NullOr(Schema.String),
  experimentId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
type Row = typeof Row.Type

const toFigure = ({ commitSha, ...row }: Row): Figure => ({ ...row, commit: commitSha })
const toRow = ({ commit, ...figure }: Figure): Row => ({ ...figure, commitSha: commit })

export interface FigureFilter extends PageQuery {
  readonly source: Option.Option<FigureSource>
  readonly experimentId: Option.Option<string>
  readonly from: Option.Option<Date>
  readonly to: Option.Option<Date>
}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class FiguresRepo extends Effect.Service<FiguresRepo>()("FiguresRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = (labId: string, filter: FigureFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM figures
          WHERE lab_id = ${labId}
            AND ${Option.match(filter.source, { onNone: () => sql`TRUE`, onSome: (s) => sql`source = ${s}` })}
            AND ${Option.match(filter.experimentId, { onNone: () => sql`TRUE`, onSome: (e) => sql`experiment_id = ${e}` })}
            AND ${Option.match(filter.from, { onNone: () => sql`TRUE`, onSome: (d) => sql`created_at >= ${d}` })}
            AND ${Option.match(filter.to, { onNone: () => sql`TRUE`, onSome: (d) => sql`created_at < ${d}` })}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf((yield* decodeRows(rows)).map(toFigure), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`SELECT * FROM figures WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findForUpdate = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`SELECT * FROM figures WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const GitRow = Schema.Struct({ blobId: Schema.String, size: Schema.Number, commitSha: Schema.String })
    const gitFigure = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, path: Schema.String }),
      Result: GitRow,
      execute: ({ labId, path }) =>
        sql`SELECT blob_id, size, commit_sha FROM figures WHERE lab_id = ${labId} AND source = 'git' AND path = ${path}`
    })

    const save = (figure: Figure) => {
      const { id, labId, createdAt: _createdAt, ...rest } = toRow(figure)
      return sql`UPDATE figures SET ${sql.update(rest)} WHERE id = ${id} AND lab_id = ${labId}`
    }

    /**
     * Sync: record figure files seen at `commit`. A new path is inserted; a known
     * one is updated only when its blob changed. Returns how many were added and
     * how many changed.
     */
    const upsertGit = (labId: string, commit: string, found: ReadonlyArray<GitFigureFile>) =>
      Effect.gen(function* () {
        let added = 0
        let changed = 0
        const now = new Date()
        for (const chunk of chunks(found, 500)) {
          const rows = chunk.map(
            (f): Row => ({
              id: newId("fig"),
              labId,
              source: "git",
              title: f.path.split("/").at(-1) ?? f.path,
              caption: null,
              path: f.path,
              url: null,
              mediaType: mediaTypeOf(f.path),
              size: f.size,
              blobId: f.oid,
              commitSha: commit,
              experimentId: null,
              createdAt: now,
              updatedAt: now
            })
          )
          const fresh = new Set(rows.map((r) => r.id))
          const written = yield* sql<{ id: string }>`
            INSERT INTO figures ${sql.insert(rows)}
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
      })

    /** Sync: forget figures whose files are gone from the repository; returns how many. */
    const removeGit = (labId: string, paths: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        let removed = 0
        for (const chunk of chunks(paths, 1000)) {
          const rows = yield* sql<{ id: string }>`
            DELETE FROM figures WHERE lab_id = ${labId} AND source = 'git' AND path IN ${sql.in(chunk)} RETURNING id`
          removed += rows.length
        }
        return removed
      })

    /** Sync: the paths of git figures below a directory (`/` for all). */
    const gitPathsUnder = (labId: string, prefix: string) =>
      Effect.map(
        sql<{ path: string }>`SELECT path FROM figures WHERE lab_id = ${labId} AND source = 'git' AND starts_with(path, ${prefix})`,
        (rows) => rows.map((r) => r.path)
      )

    return {
      list: (labId: string, filter: FigureFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string) => Effect.orDie(Effect.map(find({ labId, id }), Option.map(toFigure))),
      findForUpdate: (labId: string, id: string) => Effect.orDie(Effect.map(findForUpdate({ labId, id }), Option.map(toFigure))),
      /** A binary figure pulled from git at this lab path (the publish loop counts it as a file of the lab). */
      gitFigure: (labId: string, path: string) => Effect.orDie(gitFigure({ labId, path })),
      insert: (figure: Figure) => Effect.orDie(sql`INSERT INTO figures ${sql.insert(toRow(figure))}`),
      save: (figure: Figure) => Effect.orDie(save(figure)),
      delete: (labId: string, id: string) => Effect.orDie(sql`DELETE FROM figures WHERE id = ${id} AND lab_id = ${labId}`),
      upsertGit: (labId: string, commit: string, found: ReadonlyArray<GitFigureFile>) => Effect.orDie(upsertGit(labId, commit, found)),
      removeGit: (labId: string, paths: ReadonlyArray<string>) => Effect.orDie(removeGit(labId, paths)),
      gitPathsUnder: (labId: string, prefix: string) => Effect.orDie(gitPathsUnder(labId, prefix))
    }
  })
}) {}
