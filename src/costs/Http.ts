import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { Costs } from "./Costs.js"

export const CostsHttp = HttpApiBuilder.group(Api, "costs", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const costs = yield* Costs
    return handlers.handle("report", ({ urlParams: { labId, from, to } }) =>
      lab.read(labId, (scope) => costs.report(scope.labId, { from, to })).pipe(Effect.flatMap(ok))
    )
  })
)
