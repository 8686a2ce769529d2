import { Effect, Layer } from "effect"
import { JwtRefused, JwtSignatures } from "../../src/auth/JwtVerifier.js"

/**
 * JwtSignatures on `jose`: the identity provider's keys fetched from its JWKS
 * address (5 s at most per fetch, refetched at most every 30 s when a token
 * names a key not yet seen), signatures and registered claims checked by jose.
 * jose is loaded only when JWTs are configured: without them the process does without its modules.
 */
export const layer = (jwksUrl: URL) =>
  Layer.effect(
    JwtSignatures,
    Effect.map(Effect.promise(() => import("jose")), ({ createRemoteJWKSet, errors, jwtVerify }) => {
      const jwks = createRemoteJWKSet(jwksUrl, { timeoutDuration: 5_000, cooldownDuration: 30_000 })
      return {
        verify: (token, check) =>
          Effect.tryPromise({
            try: async () =>
              (
                await jwtVerify(token, jwks, {
                  currentDate: check.at,
                  issuer: check.issuer,
                  audience: check.audience,
                  algorithms: [...check.algorithms],
                  requiredClaims: [...check.requiredClaims]
                })
              ).payload,
            catch: (cause) =>
              cause instanceof errors.JWTExpired
                ? new JwtRefused({ reason: "expired" })
                : new JwtRefused({ reason: "invalid", code: cause instanceof errors.JOSEError ? cause.code : undefined })
          })
      }
    })
  )

