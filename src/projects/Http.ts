import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Projects } from "./Projects.js"

export const ProjectsHttp = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const projects = yield* Projects
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery({ limit, cursor }), (page) => projects.list(scope.labId, { ...page, ...filter }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => projects.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => projects.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        lab.write(labId, (scope) => projects.update(scope.labId, path.id, patch, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => projects.remove(scope.labId, path.id, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("addItem", ({ path, payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => projects.addItem(scope.labId, path.id, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("removeItem", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => projects.removeItem(scope.labId, path.id, path.itemId, scope.actor)).pipe(
          Effect.flatMap(ok)
        )
      )
  })
)
