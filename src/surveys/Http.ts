import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { Surveys } from "./Surveys.js"

export const SurveysHttp = HttpApiBuilder.group(Api, "surveys", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const surveys = yield* Surveys
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery({ limit, cursor }), (page) => surveys.list(scope.labId, { ...page, ...filter }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => surveys.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => surveys.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        lab.write(labId, (scope) => surveys.update(scope.labId, path.id, patch, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => surveys.remove(scope.labId, path.id, scope.actor)).pipe(Effect.flatMap(ok))
      )
  })
)
