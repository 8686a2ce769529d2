import { Effect, Option, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { LoopStatus, LoopStep, Paper, PaperId, type PaperStatus, PaperVersion } from "./Paper.js"

/** The fields a row stores as the paper has them (its dates aside, which the driver gives as dates). */
const { loop: _loop, publishedAt: _publishedAt, createdAt: _createdAt, updatedAt: _updatedAt, ...stored } = Paper.fields

/** A row of `papers`: timestamps come back as dates, jsonb as parsed JSON (steps with ISO strings). */
const Row = Schema.Struct({
  ...stored,
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

/** A row as the paper it stores: the loop columns become its `loop`. */
const PaperRow = Schema.transform(Row, Schema.typeSchema(Paper), {
  strict: true,
  decode: ({ loopRunId, loopStatus, loopSteps, loopStartedBy, loopStartedAt, loopFinishedAt, loopError, ...paper }) => ({
    ...paper,
    loop: {
      runId: loopRunId,
      status: loopStatus,
      steps: loopSteps,
      startedBy: loopStartedBy,
      startedAt: loopStartedAt,
      finishedAt: loopFinishedAt,
      error: loopError
    }
  }),
  encode: ({ loop, ...paper }): Row => ({
    ...paper,
    loopRunId: loop.runId,
    loopStatus: loop.status,
    loopSteps: loop.steps,
    loopStartedBy: loop.startedBy,
    loopStartedAt: loop.startedAt,
    loopFinishedAt: loop.finishedAt,
    loopError: loop.error
  })
})

const encodeSteps = Schema.encodeSync(Schema.Array(LoopStep))

/** The columns of a paper, JSON values as text for jsonb. */
const columns = (paper: Paper) => {
  const { loop, ...rest } = paper
  return {
    ...rest,
    authors: JSON.stringify(paper.authors),
    files: JSON.stringify(paper.files),
    loopRunId: loop.runId,
    loopStatus: loop.status,
    loopSteps: JSON.stringify(encodeSteps(loop.steps)),
    loopStartedBy: loop.startedBy,
    loopStartedAt: loop.startedAt,
    loopFinishedAt: loop.finishedAt,
    loopError: loop.error
  }
}

/** A stored version: PaperVersion as the database gives it (publishedAt a Date; no status, every stored one is published). */
const { status: _status, ...storedVersionFields } = PaperVersion.fields
const VersionRow = Schema.Struct({ ...storedVersionFields, publishedAt: Schema.DateFromSelf })

export interface PaperFilter extends PageQuery {
  readonly status?: PaperStatus | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const decodeRunning = Schema.decodeUnknown(Schema.Array(Schema.Struct({ labId: Schema.String, id: PaperId, loopRunId: Schema.String })))
const decodeVersionRows = Schema.decodeUnknown(Schema.Array(VersionRow))

export class PapersRepo extends Effect.Service<PapersRepo>()("PapersRepo", {
  effect: Effect.gen(function* () {
    const table = yield* makeLabTable({ table: "papers", row: PaperRow, columns })
    const sql = table.sql

    const list = (labId: LabId, filter: PaperFilter) =>
      table.page(
        labId,
        (where) => [where.eq("status", filter.status), where.created(filter)],
        filter
      )

    const versions = (labId: LabId, paperId: PaperId, before: Option.Option<number>, limit: number) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM paper_versions
          WHERE paper_id = ${paperId} AND lab_id = ${labId}
            AND ${Option.match(before, { onNone: () => sql`TRUE`, onSome: (v) => sql`version < ${v}` })}
          ORDER BY version DESC
          LIMIT ${limit + 1}`
        const decoded = yield* decodeVersionRows(rows)
        return decoded.map((row): PaperVersion => ({ ...row, status: "published" }))
      }).pipe(Effect.orDie)

    const insertVersion = (v: PaperVersion) => {
      const { status: _status, ...row } = v
      return Effect.orDie(
        sql`INSERT INTO paper_versions ${sql.insert({ ...row, authors: JSON.stringify(v.authors), files: JSON.stringify(v.files) })}`
      )
    }

    return {
      list,
      find: table.find,
      findForUpdate: table.findForUpdate,
      insert: (paper: Paper) => Effect.orDie(table.insert(paper)),
      save: (paper: Paper) => Effect.orDie(table.update(paper)),
      remove: table.remove,
      /** Loops a previous process left running: resumed at start. */
      running: Effect.orDie(
        Effect.flatMap(
          sql`SELECT lab_id, id, loop_run_id FROM papers WHERE loop_status = 'running' AND loop_run_id IS NOT NULL`,
          decodeRunning
        )
      ),
      versions,
      insertVersion
    }
  })
}) {}
