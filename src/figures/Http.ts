import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, updated } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Figures } from "./Figures.js"

export const FiguresHttp = HttpApiBuilder.group(Api, "figures", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const figures = yield* Figures
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, figures.list))
      .handle("create", ({ payload }) => created(lab, payload, figures.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, figures.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, figures.update))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, figures.remove))
  })
)
