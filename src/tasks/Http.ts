import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Tasks } from "./Tasks.js"

export const TasksHttp = HttpApiBuilder.group(Api, "tasks", (handlers) =>
  Effect.map(Effect.all([LabRequests, Tasks]), ([lab, tasks]) =>
    labRoutes(handlers, lab, {
      ...tasks,
      list: (labId, { status, ...page }) => tasks.list(labId, { ...page, status: Option.fromNullable(status) })
    })
  )
)
