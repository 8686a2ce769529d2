import { Effect, Option, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import { Task, type TaskStatus } from "./Task.js"

export interface TaskFilter extends PageQuery {
  readonly status: Option.Option<typeof TaskStatus.Type>
}

export class TasksRepo extends Effect.Service<TasksRepo>()("TasksRepo", {
  effect: Effect.map(
    makeLabTable({ table: "tasks", row: Schema.typeSchema(Task), columns: (task: Task) => ({ ...task }) }),
    (table) => ({
      remove: table.remove,
      insert: (task: Task) => Effect.orDie(table.insert(task)),
      list: table.listBy((where, filter: TaskFilter) => [where.eq("status", Option.getOrUndefined(filter.status))])
    })
  )
}) {}
