import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, updated } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Datasets } from "./Datasets.js"

export const DatasetsHttp = HttpApiBuilder.group(Api, "datasets", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const datasets = yield* Datasets
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, datasets.list))
      .handle("create", ({ payload }) => created(lab, payload, datasets.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, datasets.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, datasets.update))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, datasets.remove))
  })
)
