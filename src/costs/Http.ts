import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok } from "../http/Envelope.js"
import { Labs } from "../labs/Labs.js"
import { Costs } from "./Costs.js"

export const CostsHttp = HttpApiBuilder.group(Api, "costs", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const costs = yield* Costs
    return handlers.handle("report", ({ urlParams: { labId, from, to } }) =>
      labs.access(labId, "read").pipe(
        Effect.flatMap((lab) => costs.report(lab.id, { from, to })),
        Effect.flatMap(ok)
      )
    )
  })
)
