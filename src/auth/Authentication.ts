import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Effect, Either, FiberRef, Layer, Option } from "effect"
import { Forbidden, Unauthorized, UnauthorizedWire } from "../http/Errors.js"
import { CurrentPrincipal, isAdmin, type Principal } from "./Principal.js"

/**
 * What the global middleware learned from the Authorization header: a
 * principal, no credential at all, or a credential that failed.
 */
export const CurrentIdentity = FiberRef.unsafeMake<Either.Either<Option.Option<Principal>, Unauthorized>>(
  Either.right(Option.none())
)

/** Required on every route but GET /status: `Authorization: Bearer <API key or JWT>`. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedWire,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const principal = Effect.flatMap(FiberRef.get(CurrentIdentity), (identity) =>
  Either.match(identity, {
    onLeft: Effect.fail,
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
