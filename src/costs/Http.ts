import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { reading } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Costs } from "./Costs.js"

export const CostsHttp = HttpApiBuilder.group(Api, "costs", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const costs = yield* Costs
    return handlers.handle("report", ({ urlParams: { labId, from, to } }) =>
      reading(lab, labId, (scope) => costs.report(scope.labId, { from, to }))
    )
  })
)
