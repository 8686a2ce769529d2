import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { updated, writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Projects } from "./Projects.js"

export const ProjectsHttp = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const projects = yield* Projects
    return labRoutes(handlers, lab, projects)
      .handle("addItem", ({ path, payload }) => updated(lab, path.id, payload, projects.addItem))
      .handle("removeItem", ({ path, urlParams }) =>
        writing(lab, urlParams.labId, (scope) => projects.removeItem(scope.labId, path.id, path.itemId, scope.actor))
      )
  })
)
