import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { NotFoundWire } from "../http/Errors.js"
import { createIn, deleteById, labGroup, listOf, paged } from "../http/LabEndpoints.js"
import { CreateTask, Task, TaskId, TaskStatus } from "./Task.js"

export class TasksApi extends HttpApiGroup.make("tasks")
  .add(listOf("/tasks", paged({ labId: LabRef, status: Schema.optional(TaskStatus) }), Task))
  .add(createIn("/tasks", CreateTask, Task))
  .add(deleteById("/tasks/:taskId", Schema.Struct({ taskId: TaskId }), Task).addError(NotFoundWire))
  .pipe(labGroup) {}
