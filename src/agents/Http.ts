import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Agents } from "./Agents.js"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const agents = yield* Agents
    return handlers
      .handle("list", ({ urlParams: { labId, status, ...page } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery(page), (page) => agents.list(scope.labId, { ...page, status: Option.fromNullable(status) }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => agents.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => agents.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        lab.write(labId, (scope) => agents.update(scope.labId, path.id, patch, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => agents.remove(scope.labId, path.id, scope.actor)).pipe(Effect.flatMap(ok))
      )
  })
)
