import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { ActivityRepo } from "./ActivityRepo.js"

export const ActivityHttp = HttpApiBuilder.group(Api, "activity", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const activity = yield* ActivityRepo
    return handlers.handle("list", ({ urlParams: { labId, ...page } }) =>
      Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
        Effect.flatMap(([lab, page]) => activity.list(lab.id, page)),
        Effect.flatMap(okPage)
      )
    )
  })
)
