import { Effect, Option, Schema } from "effect"
import { pageQuery } from "../../db/Paging.js"
import { CreateTask, Task, TaskId, TaskStatus } from "../../tasks/Task.js"
import { Tasks } from "../../tasks/Tasks.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"

const { labId: _labId, ...createFields } = CreateTask.fields

/** The tasks tools: the lab's to-do list, as `/api/v1/tasks` serves it. */
export const taskTools = Effect.map(Tasks, (tasks) => [
  defineTool({
    name: "list_tasks",
    toolset: "tasks",
    access: "read",
    description: "List the lab's tasks, newest first, optionally with one status (todo, in_progress, done, cancelled).",
    input: toolInput({ status: Schema.optional(TaskStatus), ...ToolPage }),
    output: ToolPageOf(Task),
    run: ({ status, limit, cursor }, call) =>
      Effect.flatMap(pageQuery({ limit, cursor }), (page) => tasks.list(call.labId, { ...page, status: Option.fromNullable(status) }))
  }),
  defineTool({
    name: "create_task",
    toolset: "tasks",
    access: "write",
    description: "Add a task to the lab's to-do list (title, optional description and status); the activity feed records it.",
    input: toolInput(createFields),
    output: Task,
    run: (input, call) => tasks.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "delete_task",
    toolset: "tasks",
    access: "write",
    description: "Delete a task of the lab by its id (task_…); answers the task as it was.",
    input: toolInput({ taskId: TaskId }),
    output: Task,
    hints: { destructive: true },
    run: ({ taskId }, call) => tasks.remove(call.labId, taskId, call.actor)
  })
])
