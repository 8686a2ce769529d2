import { Context, Effect, Either, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import { NotAuthenticated } from "../common/DomainErrors.js"
import type { Identified } from "../common/RequestContext.js"
import { ApiKeys } from "./ApiKeys.js"
import { JwtVerifier } from "./JwtVerifier.js"
import type { Principal } from "./Principal.js"
import { API_KEY_PREFIX, sha256 } from "./Secrets.js"

/** The operator's key (ADMIN_API_KEY or DATA_DIR/admin-key), resolved at start. */
export class AdminKey extends Context.Tag("AdminKey")<AdminKey, Redacted.Redacted<string>>() {}

export const ADMIN_PRINCIPAL: Principal = {
  id: "admin",
  kind: "admin",
  name: "instance operator",
  scopes: ["admin"],
  expiresAt: null
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
const BEARER = /^Bearer[ ]+(\S+)\s*$/i

const NO_CREDENTIAL: Effect.Effect<Identified> = Effect.succeed(Either.right(Option.none()))
const ADMIN: Effect.Effect<Identified> = Effect.succeed(Either.right(Option.some(ADMIN_PRINCIPAL)))
const refused = (message: string): Effect.Effect<Identified> => Effect.succeed(Either.left(new NotAuthenticated({ reason: message })))
const unknownKey = (): Identified => Either.left(new NotAuthenticated({ reason: "unknown, revoked or expired API key" }))

/** Turns an Authorization header into the principal it proves, if any. */
export class Identity extends Effect.Service<Identity>()("Identity", {
  effect: Effect.gen(function* () {
    const adminDigest = sha256(Redacted.value(yield* AdminKey))
    const keys = yield* ApiKeys
    const jwt = yield* JwtVerifier

    /**
     * What the header proves; never fails, a refused credential is a Left.
     * The token is hashed once: the hash is compared with the operator's and
     * is what API keys are stored (and cached) by.
     */
    const identify = (header: string | undefined): Effect.Effect<Identified> => {
      if (header === undefined || header.trim() === "") return NO_CREDENTIAL
      const token = BEARER.exec(header)?.[1]
      if (!token) return refused("the Authorization header must be 'Bearer <token>'")
      const digest = sha256(token)
      if (timingSafeEqual(digest, adminDigest)) return ADMIN
      if (token.startsWith(API_KEY_PREFIX)) {
        return Effect.map(keys.authenticate(digest.toString("hex")), (principal) =>
          Option.isSome(principal) ? Either.right(principal) : unknownKey()
        )
      }
      if (JWT_SHAPE.test(token)) return Effect.either(Effect.map(jwt.verify(token), Option.some))
      return refused("the bearer token is neither an API key nor a JWT")
    }

    return { identify }
  })
}) {}
