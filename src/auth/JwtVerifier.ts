import { Context, Effect, Layer, Schema } from "effect"
import { createRemoteJWKSet, errors, jwtVerify } from "jose"
import { Unauthorized } from "../http/Errors.js"
import { type Principal, ScopeString } from "./Principal.js"
import { UsersRepo } from "./UsersRepo.js"

export interface JwtSettings {
  readonly jwksUrl: URL
  readonly issuer: string
  readonly audience: string
  readonly algorithms: ReadonlyArray<string>
  /** The claim that carries the scopes: a space-separated string (OAuth 2 `scope`) or an array. */
  readonly scopeClaim: string
}

const Claims = Schema.Struct({
  sub: Schema.String.pipe(Schema.minLength(1)),
  iss: Schema.String,
  exp: Schema.optional(Schema.Number),
  name: Schema.optional(Schema.String)
})

const isScope = Schema.is(ScopeString)

const scopesOf = (claim: unknown): ReadonlyArray<string> => {
  const values = typeof claim === "string" ? claim.split(/\s+/) : Array.isArray(claim) ? claim : []
  return values.filter(isScope)
}

/** Verifies identity-provider JWTs; `None` when the operator configured no JWKS. */
export class JwtVerifier extends Context.Tag("JwtVerifier")<
  JwtVerifier,
  { readonly verify: (token: string) => Effect.Effect<Principal, Unauthorized> }
>() {
  static readonly disabled = Layer.succeed(JwtVerifier, {
    verify: () => Effect.fail(new Unauthorized({ message: "JWTs are not accepted: this instance has no JWT_JWKS_URL" }))
  })

  static readonly layer = (settings: JwtSettings) =>
    Layer.effect(
      JwtVerifier,
      Effect.gen(function* () {
        const users = yield* UsersRepo
        const jwks = createRemoteJWKSet(settings.jwksUrl, { timeoutDuration: 5_000, cooldownDuration: 30_000 })
        // A verified token is immutable until it expires: remember it for a minute at most.
        const cache = new Map<string, { readonly principal: Principal; readonly until: number }>()
        const verify = (token: string) =>
          Effect.gen(function* () {
            const hit = cache.get(token)
            if (hit && hit.until > Date.now()) return hit.principal
            const { payload } = yield* Effect.tryPromise({
              try: () =>
                jwtVerify(token, jwks, {
                  issuer: settings.issuer,
                  audience: settings.audience,
                  algorithms: [...settings.algorithms],
                  requiredClaims: ["sub", "exp"]
                }),
              catch: (cause) =>
                new Unauthorized({
                  message:
                    cause instanceof errors.JWTExpired
                      ? "the JWT has expired"
                      : cause instanceof errors.JOSEError
                        ? `invalid JWT: ${cause.code}`
                        : "invalid JWT"
                })
            })
            const claims = yield* Schema.decodeUnknown(Claims)(payload).pipe(
              Effect.mapError(() => new Unauthorized({ message: "invalid JWT: missing sub" }))
            )
            const id = yield* users.upsert(claims.iss, claims.sub, claims.name ?? null)
            const expiresAt = claims.exp === undefined ? null : new Date(claims.exp * 1000)
            const principal: Principal = {
              id,
              kind: "jwt",
              name: claims.name ?? claims.sub,
              scopes: scopesOf(payload[settings.scopeClaim]),
              expiresAt
            }
            if (cache.size > 10_000) cache.clear()
            cache.set(token, { principal, until: Math.min(expiresAt?.getTime() ?? 0, Date.now() + 60_000) })
            return principal
          })
        return { verify }
      })
    )
}
