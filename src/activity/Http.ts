import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { ActivityRepo } from "./ActivityRepo.js"

export const ActivityHttp = HttpApiBuilder.group(Api, "activity", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const activity = yield* ActivityRepo
    return handlers.handle("list", ({ urlParams: { labId, ...page } }) =>
      lab.read(labId, (scope) => Effect.flatMap(pageQuery(page), (page) => activity.list(scope.labId, page))).pipe(
        Effect.flatMap(okPage)
      )
    )
  })
)
