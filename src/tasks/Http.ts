import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Tasks } from "./Tasks.js"

export const TasksHttp = HttpApiBuilder.group(Api, "tasks", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const tasks = yield* Tasks
    return handlers
      .handle("list", ({ urlParams: { labId, status, ...page } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) => tasks.list(lab.id, { ...page, status: Option.fromNullable(status) })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        labs.access(labId, "write").pipe(
          Effect.flatMap((lab) => tasks.create(lab.id, input)),
          Effect.flatMap(ok)
        )
      )
      .handle("delete", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "write").pipe(
          Effect.flatMap((lab) => tasks.remove(lab.id, path.taskId)),
          Effect.flatMap(ok)
        )
      )
  })
)
