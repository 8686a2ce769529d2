import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { insertLogged, removeLogged } from "../activity/Changes.js"
import { newId } from "../common/Ids.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateTask, type Task, TaskId } from "./Task.js"
import { type TaskFilter, TasksRepo } from "./TasksRepo.js"

export class Tasks extends Effect.Service<Tasks>()("Tasks", {
  dependencies: [TasksRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity } = yield* Effect.all(resourceDeps(TasksRepo))

    /** Create a task and its activity entry together; `data` adds context to the entry (e.g. the chat it came from). */
    const create = (labId: LabId, input: Omit<CreateTask, "labId">, actor: string, data: Record<string, unknown> = {}) => {
      const now = new Date()
      const task: Task = { id: TaskId.make(newId("task")), labId, ...input, createdAt: now, updatedAt: now }
      return Effect.gen(function* () {
        yield* insertLogged(activity, repo.insert, task, actor, {
          kind: "task.created",
          message: `Created task ${task.title}`,
          data: { title: task.title, status: task.status, ...data }
        })
        return task
      }).pipe(sql.withTransaction, Effect.orDie)
    }

    const remove = (labId: LabId, id: TaskId, actor: string) =>
      removeLogged({ sql, activity }, { labId, resource: "task", id, actor }, repo.remove(labId, id), (deleted) => ({
        kind: "task.deleted",
        message: `Deleted task ${deleted.title}`,
        data: { title: deleted.title }
      }))

    return { list: (labId: LabId, filter: TaskFilter) => repo.list(labId, filter), create, remove }
  })
}) {}
