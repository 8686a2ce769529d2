import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
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
        Effect.all([labs.access(labId, "write"), CurrentPrincipal]).pipe(
          Effect.flatMap(([lab, principal]) => tasks.create(lab.id, input, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.all([labs.access(urlParams.labId, "write"), CurrentPrincipal]).pipe(
          Effect.flatMap(([lab, principal]) => tasks.remove(lab.id, path.taskId, principal.id)),
          Effect.flatMap(ok)
        )
      )
  })
)
