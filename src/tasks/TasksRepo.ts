import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { Task, TaskStatus } from "./Task.js"

const Row = Schema.typeSchema(Task)
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export interface TaskFilter extends PageQuery {
  readonly status: Option.Option<typeof TaskStatus.Type>
}

export class TasksRepo extends Effect.Service<TasksRepo>()("TasksRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = (labId: string, filter: TaskFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM tasks
          WHERE lab_id = ${labId}
            AND ${Option.match(filter.status, { onNone: () => sql`TRUE`, onSome: (s) => sql`status = ${s}` })}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf(yield* decodeRows(rows), filter.limit)
      })

    const deleteOne = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ id, labId }) => sql`DELETE FROM tasks WHERE id = ${id} AND lab_id = ${labId} RETURNING *`
    })

    return {
      list: (labId: string, filter: TaskFilter) => Effect.orDie(list(labId, filter)),
      insert: (task: Task) => Effect.orDie(sql`INSERT INTO tasks ${sql.insert(task)}`),
      delete: (labId: string, id: string): Effect.Effect<Option.Option<Task>> => Effect.orDie(deleteOne({ labId, id }))
    }
  })
}) {}
