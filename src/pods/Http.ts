import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Pods } from "./Pods.js"

export const PodsHttp = HttpApiBuilder.group(Api, "pods", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const pods = yield* Pods
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, pods.list))
      .handle("create", ({ payload }) => created(lab, payload, pods.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.podId, pods.get))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.podId, pods.remove))
      .handle("start", ({ path, payload }) =>
        writing(lab, payload.labId, (scope) => pods.start(scope.labId, path.podId, scope.actor))
      )
      .handle("stop", ({ path, payload }) =>
        writing(lab, payload.labId, (scope) => pods.stop(scope.labId, path.podId, scope.actor))
      )
  })
)
