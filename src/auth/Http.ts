import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { domainErrorsAsHttp } from "../http/DomainErrorsHttp.js"
import { NotFound } from "../http/Errors.js"
import { pageQuery } from "../db/Paging.js"
import { Labs } from "../labs/Labs.js"
import { AdminLimits, PLAN_LIMITS } from "../ratelimit/RateLimits.js"
import { ApiKeys } from "./ApiKeys.js"
import { CurrentPrincipal, isAdmin } from "./Principal.js"

export const MeHttp = HttpApiBuilder.group(Api, "me", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const adminLimits = yield* AdminLimits
    return handlers.handle("me", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        const plan = yield* labs.planOf(principal)
        return yield* ok({
          id: principal.id,
          kind: principal.kind,
          name: principal.name,
          scopes: principal.scopes,
          plan,
          limits: isAdmin(principal) ? adminLimits : PLAN_LIMITS[plan],
          expiresAt: principal.expiresAt
        })
      })
    )
  })
)

export const KeysHttp = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.all([CurrentPrincipal, pageQuery(urlParams)]).pipe(
          Effect.flatMap(([principal, page]) => keys.list(principal, page)),
          domainErrorsAsHttp,
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => keys.create(principal, payload)).pipe(
          domainErrorsAsHttp,
          Effect.flatMap(ok)
        )
      )
      .handle("revoke", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => keys.revoke(principal, urlParams.id)).pipe(
          Effect.catchTag("ApiKeyNotFound", (e) => Effect.fail(new NotFound({ message: e.message }))),
          Effect.flatMap(ok)
        )
      )
  })
)
