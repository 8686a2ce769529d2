import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { requireAdmin } from "../http/Authentication.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { domainErrorsAsHttp } from "../http/DomainErrorsHttp.js"
import { pageQuery } from "../db/Paging.js"
import { Labs } from "./Labs.js"

export const LabsHttp = HttpApiBuilder.group(Api, "labs", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.all([CurrentPrincipal, pageQuery(urlParams)]).pipe(
          Effect.flatMap(([principal, page]) => labs.list(principal, page)),
          domainErrorsAsHttp,
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload }) =>
        requireAdmin.pipe(Effect.zipRight(labs.create(payload)), domainErrorsAsHttp, Effect.flatMap(ok))
      )
  })
)
