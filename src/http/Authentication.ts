import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Effect, Either, FiberRef, Layer, Option } from "effect"
import { CurrentPrincipal, isAdmin } from "../auth/Principal.js"
import { toApiError } from "./DomainErrorsHttp.js"
import { Forbidden, Unauthorized, UnauthorizedWire } from "./Errors.js"
import { CurrentRequest } from "../common/RequestContext.js"

/** Required on every route but GET /status: `Authorization: Bearer <API key or JWT>`. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedWire,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The principal the request pipeline identified for this request (src/http/steps/Identify.ts, RequestContext). */
const principal = Effect.flatMap(FiberRef.get(CurrentRequest), ({ identity }) =>
  Either.match(identity, {
    onLeft: (refused) => Effect.fail(toApiError(refused)),
    onRight: Option.match({
      onNone: () => Effect.fail(new Unauthorized({ message: "missing credentials: send Authorization: Bearer <token>" })),
      onSome: Effect.succeed
    })
  })
)

export const AuthenticationLive = Layer.succeed(Authentication, { bearer: () => principal })

/** Operator-only actions. */
export const requireAdmin = Effect.flatMap(CurrentPrincipal, (p) =>
  isAdmin(p) ? Effect.void : Effect.fail(new Forbidden({ message: "only the instance operator (admin scope) may do this" }))
)
