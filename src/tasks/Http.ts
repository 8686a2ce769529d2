import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Tasks } from "./Tasks.js"

export const TasksHttp = HttpApiBuilder.group(Api, "tasks", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const tasks = yield* Tasks
    return handlers
      .handle("list", ({ urlParams: { labId, status, ...page } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery(page), (page) => tasks.list(scope.labId, { ...page, status: Option.fromNullable(status) }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => tasks.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => tasks.remove(scope.labId, path.taskId, scope.actor)).pipe(Effect.flatMap(ok))
      )
  })
)
