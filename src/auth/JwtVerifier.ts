import { Cache, Clock, Context, Data, Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import { LATEST_TIME } from "../common/Schemas.js"
import { notCounted } from "../db/ConnectionLoss.js"
import { causeIsDiskFull } from "../db/DiskFull.js"
import { NotAuthenticated } from "../common/DomainErrors.js"
import { problemWith } from "../common/TextHygiene.js"
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

/** Why the signature library refused a token: expired, or invalid (with the library's code for what, when it gave one). */
export class JwtRefused extends Data.TaggedError("JwtRefused")<{
  readonly reason: "expired" | "invalid"
  readonly code?: string | undefined
}> {}

/** What a token is checked against besides its signature: the registered claims, at a time. */
export interface JwtCheck {
  readonly at: Date
  readonly issuer: string
  readonly audience: string
  readonly algorithms: ReadonlyArray<string>
  readonly requiredClaims: ReadonlyArray<string>
}

/**
 * The JOSE library's part (layers/auth/JoseJwks.ts): a token's signature
 * against the identity provider's published keys, and its registered claims;
 * the token's payload, or why it was refused. The policy is JwtVerifier's.
 */
export class JwtSignatures extends Context.Tag("JwtSignatures")<
  JwtSignatures,
  { readonly verify: (token: string, check: JwtCheck) => Effect.Effect<Readonly<Record<string, unknown>>, JwtRefused> }
>() {}

const refusal = (refused: JwtRefused) =>
  new NotAuthenticated({
    reason:
      refused.reason === "expired" ? "the JWT has expired" : refused.code !== undefined ? `invalid JWT: ${refused.code}` : "invalid JWT"
  })

/** The longest subject or name accepted: OpenID Connect bounds `sub` at 255 ASCII characters. */
const MAX_CLAIM_LENGTH = 1024

/**
 * A claim stored as text: no NUL and no lone surrogate, which PostgreSQL refuses or the driver turns into U+FFFD
 * (so `a\ud800b` and `a\ufffdb` would be one user), and bounded.
 */
const TextClaim = Schema.String.pipe(
  Schema.maxLength(MAX_CLAIM_LENGTH),
  Schema.filter((s) => problemWith(s) === undefined)
)

const Claims = Schema.Struct({
  sub: TextClaim.pipe(Schema.minLength(1)),
  iss: Schema.String,
  // seconds; a time JavaScript cannot hold (past year 9999) would make the token's expiry an invalid date
  exp: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.lessThanOrEqualTo(LATEST_TIME / 1000))),
  name: Schema.optional(TextClaim)
})

const isScope = Schema.is(ScopeString)

/** A verified token is immutable until it expires: remembered for this long at most, and never past its `exp`. */
const CACHE_TTL_MILLIS = 60_000
/** Tokens remembered at most; the least recently used go first. */
const CACHE_CAPACITY = 10_000

const scopesOf = (claim: unknown): ReadonlyArray<string> => {
  const values = typeof claim === "string" ? claim.split(/\s+/) : Array.isArray(claim) ? claim : []
  return values.filter(isScope)
}

/** Verifies identity-provider JWTs; `None` when the operator configured no JWKS. */
export class JwtVerifier extends Context.Tag("JwtVerifier")<
  JwtVerifier,
  { readonly verify: (token: string) => Effect.Effect<Principal, NotAuthenticated> }
>() {
  static readonly disabled = Layer.succeed(JwtVerifier, {
    verify: () => Effect.fail(new NotAuthenticated({ reason: "JWTs are not accepted: this instance has no JWT_JWKS_URL" }))
  })

  static readonly layer = (settings: JwtSettings) =>
    Layer.effect(
      JwtVerifier,
      Effect.gen(function* () {
        const users = yield* UsersRepo
        const signatures = yield* JwtSignatures
        const check = (token: string) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const payload = yield* signatures
              .verify(token, {
                at: new Date(now),
                issuer: settings.issuer,
                audience: settings.audience,
                algorithms: settings.algorithms,
                requiredClaims: ["sub", "exp"]
              })
              .pipe(Effect.mapError(refusal))
            const claims = yield* Schema.decodeUnknown(Claims)(payload).pipe(
              Effect.mapError(() => new NotAuthenticated({ reason: "invalid JWT: its sub, name or exp claim is missing or unusable" }))
            )
            // the user's record is bookkeeping, idempotent: it leaves a read a read (src/db/ConnectionLoss.ts)
            // on a full disk (53100, ENOSPC) the upsert cannot be written: a known user is read without it, so reads
            // go on; a user never seen still needs the row, and its request keeps the disk-full answer (507)
            const id = yield* notCounted(users.upsert(claims.iss, claims.sub, claims.name ?? null)).pipe(
              Effect.catchAllCause((cause) =>
                causeIsDiskFull(cause)
                  ? Effect.flatMap(users.find(claims.iss, claims.sub), Option.match({ onNone: () => Effect.failCause(cause), onSome: Effect.succeed }))
                  : Effect.failCause(cause)
              )
            )
            const expiresAt = claims.exp === undefined ? null : new Date(claims.exp * 1000)
            const principal: Principal = {
              id,
              kind: "jwt",
              name: claims.name ?? claims.sub,
              scopes: scopesOf(payload[settings.scopeClaim]),
              expiresAt
            }
            // remembered while `now < exp` (the cache keeps an entry up to and including its last millisecond)
            const at = yield* Clock.currentTimeMillis
            const timeToLive = Duration.millis(Math.min((expiresAt?.getTime() ?? 0) - at - 1, CACHE_TTL_MILLIS))
            return { principal, timeToLive }
          })
        // a refused token is not remembered: it is checked again, as the keys it names may have arrived since
        const cache = yield* Cache.makeWith({
          capacity: CACHE_CAPACITY,
          // uninterruptible: the first caller runs it for all who wait on it, and may go away
          lookup: (token: string) => Effect.uninterruptible(check(token)),
          timeToLive: (exit) => (Exit.isSuccess(exit) ? exit.value.timeToLive : Duration.zero)
        })
        const verify = (token: string) => Effect.map(cache.get(token), ({ principal }) => principal)
        return { verify }
      })
    )
}
