import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Standups } from "./Standups.js"

export const StandupsHttp = HttpApiBuilder.group(Api, "standups", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const standups = yield* Standups
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, standups.list))
      .handle("create", ({ payload }) => created(lab, payload, standups.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, standups.get))
  })
)
