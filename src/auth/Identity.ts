import { Context, Effect, Option, Redacted } from "effect"
import { Unauthorized } from "../http/Errors.js"
import { ApiKeys } from "./ApiKeys.js"
import { JwtVerifier } from "./JwtVerifier.js"
import type { Principal } from "./Principal.js"
import { API_KEY_PREFIX, safeEqual, sha256Hex } from "./Secrets.js"

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

/** Turns an Authorization header into the principal it proves, if any. */
export class Identity extends Effect.Service<Identity>()("Identity", {
  effect: Effect.gen(function* () {
    const adminHash = sha256Hex(Redacted.value(yield* AdminKey))
    const keys = yield* ApiKeys
    const jwt = yield* JwtVerifier

    const fromToken = (token: string): Effect.Effect<Principal, Unauthorized> => {
      if (safeEqual(sha256Hex(token), adminHash)) return Effect.succeed(ADMIN_PRINCIPAL)
      if (token.startsWith(API_KEY_PREFIX)) {
        return Effect.flatMap(keys.authenticate(token), (principal) =>
          Option.match(principal, {
            onNone: () => Effect.fail(new Unauthorized({ message: "unknown, revoked or expired API key" })),
            onSome: Effect.succeed
          })
        )
      }
      if (JWT_SHAPE.test(token)) return jwt.verify(token)
      return Effect.fail(new Unauthorized({ message: "the bearer token is neither an API key nor a JWT" }))
    }

    /** `None` when there is no Authorization header at all. */
    const authenticate = (header: string | undefined): Effect.Effect<Option.Option<Principal>, Unauthorized> => {
      if (header === undefined || header.trim() === "") return Effect.succeed(Option.none())
      const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header)
      if (!match || !match[1]) {
        return Effect.fail(new Unauthorized({ message: "the Authorization header must be 'Bearer <token>'" }))
      }
      return Effect.map(fromToken(match[1]), Option.some)
    }

    return { authenticate }
  })
}) {}
