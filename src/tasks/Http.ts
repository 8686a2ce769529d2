import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { created, listed, removed } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Tasks } from "./Tasks.js"

export const TasksHttp = HttpApiBuilder.group(Api, "tasks", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const tasks = yield* Tasks
    return handlers
      .handle("list", ({ urlParams }) =>
        listed(lab, urlParams, (labId, { status, ...page }) => tasks.list(labId, { ...page, status: Option.fromNullable(status) }))
      )
      .handle("create", ({ payload }) => created(lab, payload, tasks.create))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.taskId, tasks.remove))
  })
)
