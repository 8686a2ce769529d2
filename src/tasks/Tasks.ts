import { Effect, Option } from "effect"
import { newId } from "../common/Ids.js"
import { NotFound } from "../http/Errors.js"
import type { CreateTask, Task } from "./Task.js"
import { type TaskFilter, TasksRepo } from "./TasksRepo.js"

export class Tasks extends Effect.Service<Tasks>()("Tasks", {
  dependencies: [TasksRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* TasksRepo

    const create = (labId: string, input: Omit<CreateTask, "labId">) => {
      const now = new Date()
      const task: Task = { id: newId("task"), labId, ...input, createdAt: now, updatedAt: now }
      return Effect.as(repo.insert(task), task)
    }

    const remove = (labId: string, id: string) =>
      Effect.flatMap(
        repo.delete(labId, id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `no task ${id} in this lab` })),
          onSome: Effect.succeed
        })
      )

    return { list: (labId: string, filter: TaskFilter) => repo.list(labId, filter), create, remove }
  })
}) {}
