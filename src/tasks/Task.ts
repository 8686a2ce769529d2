import { Schema } from "effect"
import { Body, LabRef, LabResource, Name, resourceId } from "../common/Schemas.js"

export const TaskStatus = Schema.Literal("todo", "in_progress", "done", "cancelled")

export const TaskId = resourceId("TaskId", "task")
export type TaskId = typeof TaskId.Type

export const Task = LabResource(TaskId, {
  title: Schema.String,
  description: Schema.String,
  status: TaskStatus
}).annotations({ identifier: "Task" })
export type Task = typeof Task.Type

export const CreateTask = Body({
  labId: LabRef,
  title: Name(500),
  description: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(20_000)), { default: () => "" }),
  status: Schema.optionalWith(TaskStatus, { default: () => "todo" as const })
})
export type CreateTask = typeof CreateTask.Type
