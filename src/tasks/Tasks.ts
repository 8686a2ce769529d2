import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { NotFound } from "../http/Errors.js"
import type { CreateTask, Task } from "./Task.js"
import { type TaskFilter, TasksRepo } from "./TasksRepo.js"

export class Tasks extends Effect.Service<Tasks>()("Tasks", {
  dependencies: [TasksRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* TasksRepo
    const activity = yield* ActivityRepo

    /** Create a task and its activity entry together; `data` adds context to the entry (e.g. the chat it came from). */
    const create = (labId: string, input: Omit<CreateTask, "labId">, actor: string, data: Record<string, unknown> = {}) => {
      const now = new Date()
      const task: Task = { id: newId("task"), labId, ...input, createdAt: now, updatedAt: now }
      return Effect.gen(function* () {
        yield* repo.insert(task)
        yield* activity.record({
          labId,
          kind: "task.created",
          ref: task.id,
          actor,
          message: `Created task ${task.title}`,
          data: { title: task.title, status: task.status, ...data }
        })
        return task
      }).pipe(sql.withTransaction, Effect.orDie)
    }

    const remove = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const deleted = yield* repo.delete(labId, id)
        if (Option.isNone(deleted)) return yield* new NotFound({ message: `no task ${id} in this lab` })
        yield* activity.record({
          labId,
          kind: "task.deleted",
          ref: id,
          actor,
          message: `Deleted task ${deleted.value.title}`,
          data: { title: deleted.value.title }
        })
        return deleted.value
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list: (labId: string, filter: TaskFilter) => repo.list(labId, filter), create, remove }
  })
}) {}
