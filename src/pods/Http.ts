import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Pods } from "./Pods.js"

export const PodsHttp = HttpApiBuilder.group(Api, "pods", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const pods = yield* Pods
    return labRoutes(handlers, lab, pods)
      .handle("start", ({ path, payload }) =>
        writing(lab, payload.labId, (scope) => pods.start(scope.labId, path.podId, scope.actor))
      )
      .handle("stop", ({ path, payload }) =>
        writing(lab, payload.labId, (scope) => pods.stop(scope.labId, path.podId, scope.actor))
      )
  })
)
