import * as SqlSchema from "@effect/sql/SqlSchema"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"
import { makeLabTable } from "../db/LabTable.js"
import { keyset, pageOf, type PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { type Project, ProjectId, ProjectItem, ProjectStatus } from "./Project.js"
import type { RefKind } from "./References.js"

const Date_ = Schema.typeSchema(Timestamp)

/** A project row; item_count is not a column but what the reads below count (none where a row is only returned). */
const Row = Schema.Struct({
  id: ProjectId,
  labId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  status: ProjectStatus,
  itemCount: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  createdAt: Date_,
  updatedAt: Date_
})
const ItemRow = Schema.typeSchema(ProjectItem)
const Key = Schema.Struct({ labId: Schema.String, id: Schema.String })

export interface ProjectFilter extends PageQuery {
  readonly status?: ProjectStatus | undefined
  readonly ref?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const columns = ({ itemCount: _, ...project }: Project) => ({ ...project })

export class ProjectsRepo extends Effect.Service<ProjectsRepo>()("ProjectsRepo", {
  effect: Effect.gen(function* () {
    const table = yield* makeLabTable({ table: "projects", row: Row, columns })
    const sql = table.sql
    const when = <A>(value: A | undefined, f: (a: A) => Fragment): Fragment => (value === undefined ? sql`TRUE` : f(value))
    const select = sql`SELECT p.*, (SELECT count(*)::int FROM project_items i WHERE i.project_id = p.id) AS item_count FROM projects p`

    const list = (labId: LabId, filter: ProjectFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          ${select}
          WHERE p.lab_id = ${labId}
            AND ${when(filter.status, (s) => sql`p.status = ${s}`)}
            AND ${when(filter.ref, (r) => sql`EXISTS (SELECT 1 FROM project_items i WHERE i.project_id = p.id AND i.ref = ${r})`)}
            AND ${when(filter.from, (d) => sql`p.created_at >= ${d}`)}
            AND ${when(filter.to, (d) => sql`p.created_at < ${d}`)}
            AND ${keyset(sql, filter.cursor, "p")}
          ORDER BY p.created_at DESC, p.id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf(yield* decodeRows(rows), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`${select} WHERE p.id = ${id} AND p.lab_id = ${labId}`
    })

    const findByName = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, name: Schema.String }),
      Result: Schema.Struct({ id: Schema.String, name: Schema.String }),
      execute: ({ labId, name }) => sql`SELECT id, name FROM projects WHERE lab_id = ${labId} AND lower(name) = lower(${name})`
    })

    const items = SqlSchema.findAll({
      Request: Schema.String,
      Result: ItemRow,
      execute: (projectId) => sql`SELECT * FROM project_items WHERE project_id = ${projectId} ORDER BY created_at, id`
    })

    const findItem = SqlSchema.findOne({
      Request: Schema.Struct({ projectId: Schema.String, kind: Schema.String, ref: Schema.String }),
      Result: ItemRow,
      execute: ({ projectId, kind, ref }) =>
        sql`SELECT * FROM project_items WHERE project_id = ${projectId} AND kind = ${kind} AND ref = ${ref}`
    })

    const deleteItem = SqlSchema.findOne({
      Request: Schema.Struct({ projectId: Schema.String, id: Schema.String }),
      Result: ItemRow,
      execute: ({ projectId, id }) => sql`DELETE FROM project_items WHERE project_id = ${projectId} AND id = ${id} RETURNING *`
    })

    const findCounted = (labId: LabId, id: string): Effect.Effect<Option.Option<Project>> => Effect.orDie(find({ labId, id }))

    return {
      list: (labId: LabId, filter: ProjectFilter) => Effect.orDie(list(labId, filter)),
      find: findCounted,
      /** Inside a transaction: lock the project row, then read it with its item count. */
      findForUpdate: (labId: LabId, id: string): Effect.Effect<Option.Option<Project>> =>
        Effect.flatMap(table.findForUpdate(labId, id), (locked) => (Option.isNone(locked) ? Effect.succeedNone : findCounted(labId, id))),
      findByName: (labId: LabId, name: string) => Effect.orDie(findByName({ labId, name })),
      items: (projectId: string): Effect.Effect<ReadonlyArray<ProjectItem>> => Effect.orDie(items(projectId)),
      findItem: (projectId: string, kind: RefKind, ref: string): Effect.Effect<Option.Option<ProjectItem>> =>
        Effect.orDie(findItem({ projectId, kind, ref })),
      /** Fails with the SqlError of a unique violation when the name is taken. */
      insert: table.insert,
      /** Fails with the SqlError of a unique violation when the new name is taken. */
      update: table.update,
      touch: (projectId: string, at: Date) => Effect.orDie(sql`UPDATE projects SET updated_at = ${at} WHERE id = ${projectId}`),
      /** Fails with the SqlError of a unique violation when the item is there already. */
      insertItem: (item: ProjectItem) => sql`INSERT INTO project_items ${sql.insert(item)}`,
      deleteItem: (projectId: string, id: string): Effect.Effect<Option.Option<ProjectItem>> =>
        Effect.orDie(deleteItem({ projectId, id })),
      remove: table.remove
    }
  })
}) {}
