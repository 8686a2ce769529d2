import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { Author, LoopStatus, LoopStep, type Paper, PaperStatus, PaperVersion } from "./Paper.js"

/** A row of `papers`: timestamps come back as dates, jsonb as parsed JSON (steps with ISO strings). */
const Row = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  title: Schema.String,
  abstract: Schema.String,
  authors: Schema.Array(Author),
  files: Schema.Array(Schema.String),
  status: PaperStatus,
  version: Schema.Number,
  publishedVersion: Schema.NullOr(Schema.Number),
  publishedAt: Schema.NullOr(Schema.DateFromSelf),
  loopRunId: Schema.NullOr(Schema.String),
  loopStatus: LoopStatus,
  loopSteps: Schema.Array(LoopStep),
  loopStartedBy: Schema.NullOr(Schema.String),
  loopStartedAt: Schema.NullOr(Schema.DateFromSelf),
  loopFinishedAt: Schema.NullOr(Schema.DateFromSelf),
  loopError: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
type Row = typeof Row.Type

const toPaper = (row: Row): Paper => ({
  id: row.id,
  labId: row.labId,
  title: row.title,
  abstract: row.abstract,
  authors: row.authors,
  files: row.files,
  status: row.status,
  version: row.version,
  publishedVersion: row.publishedVersion,
  publishedAt: row.publishedAt,
  loop: {
    runId: row.loopRunId,
    status: row.loopStatus,
    steps: row.loopSteps,
    startedBy: row.loopStartedBy,
    startedAt: row.loopStartedAt,
    finishedAt: row.loopFinishedAt,
    error: row.loopError
  },
  createdAt: row.createdAt,
  updatedAt: row.updatedAt
})

const encodeSteps = Schema.encodeSync(Schema.Array(LoopStep))

/** The columns of a paper, JSON values as text for jsonb. */
const columns = (paper: Paper) => ({
  id: paper.id,
  labId: paper.labId,
  title: paper.title,
  abstract: paper.abstract,
  authors: JSON.stringify(paper.authors),
  files: JSON.stringify(paper.files),
  status: paper.status,
  version: paper.version,
  publishedVersion: paper.publishedVersion,
  publishedAt: paper.publishedAt,
  loopRunId: paper.loop.runId,
  loopStatus: paper.loop.status,
  loopSteps: JSON.stringify(encodeSteps(paper.loop.steps)),
  loopStartedBy: paper.loop.startedBy,
  loopStartedAt: paper.loop.startedAt,
  loopFinishedAt: paper.loop.finishedAt,
  loopError: paper.loop.error,
  createdAt: paper.createdAt,
  updatedAt: paper.updatedAt
})

const VersionRow = Schema.Struct({
  paperId: Schema.String,
  labId: Schema.String,
  version: Schema.Number,
  title: Schema.String,
  abstract: Schema.String,
  authors: Schema.Array(Author),
  files: PaperVersion.fields.files,
  publishedAt: Schema.DateFromSelf,
  publishedBy: Schema.String
})

export interface PaperFilter extends PageQuery {
  readonly status: Option.Option<PaperStatus>
  readonly from: Option.Option<Date>
  readonly to: Option.Option<Date>
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
const decodeVersionRows = Schema.decodeUnknown(Schema.Array(VersionRow))

export class PapersRepo extends Effect.Service<PapersRepo>()("PapersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = (labId: string, filter: PaperFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM papers
          WHERE lab_id = ${labId}
            AND ${Option.match(filter.status, { onNone: () => sql`TRUE`, onSome: (s) => sql`status = ${s}` })}
            AND ${Option.match(filter.from, { onNone: () => sql`TRUE`, onSome: (d) => sql`created_at >= ${d}` })}
            AND ${Option.match(filter.to, { onNone: () => sql`TRUE`, onSome: (d) => sql`created_at < ${d}` })}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf((yield* decodeRows(rows)).map(toPaper), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`SELECT * FROM papers WHERE id = ${id} AND lab_id = ${labId}`
    })

    /** The row, locked until the transaction ends: every change of a paper reads it this way first. */
    const findForUpdate = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`SELECT * FROM papers WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const save = (paper: Paper) => {
      // everything but the identity and the creation time
      const { id, labId, createdAt: _createdAt, ...rest } = columns(paper)
      return Effect.asVoid(sql`UPDATE papers SET ${sql.update(rest)} WHERE id = ${id} AND lab_id = ${labId}`)
    }

    const versions = (labId: string, paperId: string, before: Option.Option<number>, limit: number) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM paper_versions
          WHERE paper_id = ${paperId} AND lab_id = ${labId}
            AND ${Option.match(before, { onNone: () => sql`TRUE`, onSome: (v) => sql`version < ${v}` })}
          ORDER BY version DESC
          LIMIT ${limit + 1}`
        const decoded = yield* decodeVersionRows(rows)
        return decoded.map((row): PaperVersion => ({ ...row, status: "published" }))
      })

    const insertVersion = (v: PaperVersion) => {
      const { status: _status, ...row } = v
      return sql`INSERT INTO paper_versions ${sql.insert({ ...row, authors: JSON.stringify(v.authors), files: JSON.stringify(v.files) })}`
    }

    return {
      list: (labId: string, filter: PaperFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string) => Effect.orDie(Effect.map(find({ labId, id }), Option.map(toPaper))),
      findForUpdate: (labId: string, id: string) => Effect.orDie(Effect.map(findForUpdate({ labId, id }), Option.map(toPaper))),
      insert: (paper: Paper) => Effect.orDie(sql`INSERT INTO papers ${sql.insert(columns(paper))}`),
      save: (paper: Paper) => Effect.orDie(save(paper)),
      delete: (labId: string, id: string) => Effect.orDie(sql`DELETE FROM papers WHERE id = ${id} AND lab_id = ${labId}`),
      /** Loops a previous process left running: resumed at start. */
      running: Effect.orDie(
        sql<{ labId: string; id: string; loopRunId: string }>`
          SELECT lab_id, id, loop_run_id FROM papers WHERE loop_status = 'running' AND loop_run_id IS NOT NULL`
      ),
      versions: (labId: string, paperId: string, before: Option.Option<number>, limit: number) =>
        Effect.orDie(versions(labId, paperId, before, limit)),
      insertVersion: (v: PaperVersion) => Effect.orDie(insertVersion(v))
    }
  })
}) {}
