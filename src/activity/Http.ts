import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { listed } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { ActivityRepo } from "./ActivityRepo.js"

export const ActivityHttp = HttpApiBuilder.group(Api, "activity", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const activity = yield* ActivityRepo
    return handlers.handle("list", ({ urlParams }) => listed(lab, urlParams, activity.list)
    )
  })
)
