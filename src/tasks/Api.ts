import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { NotFoundWire } from "../http/Errors.js"
import { createIn, deleteById, labGroup, listOf, paged } from "../http/LabEndpoints.js"
import { CreateTask, Task, TaskId, TaskStatus } from "./Task.js"

export class TasksApi extends HttpApiGroup.make("tasks")
  .add(
    listOf("/tasks", paged({ labId: LabRef, status: Schema.optional(TaskStatus) }), Task).annotateContext(
      OpenApi.annotations({
        summary: "List tasks",
        description:
          "The lab's tasks, newest first, optionally only those in one `status` (todo, in_progress, done, cancelled)."
      })
    )
  )
  .add(
    createIn("/tasks", CreateTask, Task).annotateContext(
      OpenApi.annotations({
        summary: "Create a task",
        description:
          "Adds a task to the lab with a title, an optional description and a status (default `todo`). A chat's outcome can become one through POST /api/v1/chats/{id}/promote."
      })
    )
  )
  .add(
    deleteById("/tasks/:taskId", Schema.Struct({ taskId: TaskId }), Task)
      .addError(NotFoundWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Delete a task",
          description:
            "Removes the task and answers it as it was; 404 when it is not in that lab."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "The lab's tasks: todo, in_progress, done or cancelled."
  ) {}
