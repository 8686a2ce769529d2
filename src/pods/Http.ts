import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Pods } from "./Pods.js"

export const PodsHttp = HttpApiBuilder.group(Api, "pods", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const pods = yield* Pods
    return handlers
      .handle("list", ({ urlParams: { labId, status, ...page } }) =>
        lab.read(labId, (scope) => Effect.flatMap(pageQuery(page), (query) => pods.list(scope.labId, { ...query, status }))).pipe(
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => pods.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => pods.get(scope.labId, path.podId)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => pods.remove(scope.labId, path.podId, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("start", ({ path, payload }) =>
        lab.write(payload.labId, (scope) => pods.start(scope.labId, path.podId, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("stop", ({ path, payload }) =>
        lab.write(payload.labId, (scope) => pods.stop(scope.labId, path.podId, scope.actor)).pipe(Effect.flatMap(ok))
      )
  })
)
