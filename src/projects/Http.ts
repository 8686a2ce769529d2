import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, updated, writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Projects } from "./Projects.js"

export const ProjectsHttp = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const projects = yield* Projects
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, projects.list))
      .handle("create", ({ payload }) => created(lab, payload, projects.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, projects.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, projects.update))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, projects.remove))
      .handle("addItem", ({ path, payload: { labId, ...input } }) =>
        writing(lab, labId, (scope) => projects.addItem(scope.labId, path.id, input, scope.actor))
      )
      .handle("removeItem", ({ path, urlParams }) =>
        writing(lab, urlParams.labId, (scope) => projects.removeItem(scope.labId, path.id, path.itemId, scope.actor))
      )
  })
)
