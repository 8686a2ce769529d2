import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, updated } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Surveys } from "./Surveys.js"

export const SurveysHttp = HttpApiBuilder.group(Api, "surveys", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const surveys = yield* Surveys
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, surveys.list))
      .handle("create", ({ payload }) => created(lab, payload, surveys.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, surveys.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, surveys.update))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, surveys.remove))
  })
)
