/**
 * The verified-JWT cache, in virtual time (the verifier checks `exp` and `nbf`
 * at the Clock's time, so the test clock moves both). A verification is seen
 * through the user upsert it ends with, counted here.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, TestClock } from "effect"
import * as JoseJwks from "../../layers/auth/JoseJwks.js"
import { JwtVerifier } from "../../src/auth/JwtVerifier.js"
import { UsersRepo } from "../../src/auth/UsersRepo.js"
import { startIdentityProvider, type TestIdentityProvider } from "../support/Jwks.js"

/** What the users' repository does besides counting its upserts (the default: upserts succeed). */
interface UsersDouble {
  readonly upsert?: Effect.Effect<string>
  readonly find?: Effect.Effect<Option.Option<string>>
}

const withVerifier = <A, E>(
  test: (provider: TestIdentityProvider, verifications: () => number) => Effect.Effect<A, E, JwtVerifier>,
  double: UsersDouble = {}
) =>
  Effect.gen(function* () {
    // the test clock starts at the wall clock's time, which the tokens are signed at
    yield* TestClock.setTime(Date.now())
    const provider = yield* Effect.acquireRelease(Effect.promise(startIdentityProvider), (p) => Effect.promise(p.close))
    let upserts = 0
    const users = Layer.succeed(
      UsersRepo,
      UsersRepo.make({
        upsert: () => Effect.zipRight(Effect.sync(() => upserts++), double.upsert ?? Effect.succeed("user_counted")),
        find: () => double.find ?? Effect.succeed(Option.none())
      })
    )
    const verifier = JwtVerifier.layer({
      jwksUrl: provider.jwksUrl,
      issuer: provider.issuer,
      audience: provider.audience,
      algorithms: ["RS256"],
      scopeClaim: "scope"
    }).pipe(Layer.provide([users, JoseJwks.layer(provider.jwksUrl)]))
    return yield* Effect.provide(test(provider, () => upserts), verifier)
  }).pipe(Effect.scoped)

describe("the verified-JWT cache", () => {
  it.effect("remembers a verified token for a minute at most", () =>
    withVerifier((provider, verifications) =>
      Effect.gen(function* () {
        const { verify } = yield* JwtVerifier
        const token = yield* Effect.promise(() => provider.sign({ expiresIn: 3600 }))
        yield* verify(token)
        yield* verify(token)
        expect(verifications()).toBe(1)
        yield* TestClock.adjust("60 seconds")
        yield* verify(token)
        expect(verifications()).toBe(1)
        yield* TestClock.adjust("1 millis")
        yield* verify(token)
        expect(verifications()).toBe(2)
      })
    ))

  it.effect("never answers for a token past its exp, even within the minute", () =>
    withVerifier((provider, verifications) =>
      Effect.gen(function* () {
        const { verify } = yield* JwtVerifier
        const token = yield* Effect.promise(() => provider.sign({ expiresIn: 30 }))
        const principal = yield* verify(token)
        const expiresAt = principal.expiresAt?.getTime() ?? 0
        yield* TestClock.setTime(expiresAt - 1)
        yield* verify(token)
        expect(verifications()).toBe(1)
        yield* TestClock.setTime(expiresAt)
        const refused = yield* Effect.exit(verify(token))
        expect(refused).toStrictEqual(Exit.fail(expect.objectContaining({ message: "the JWT has expired" })))
      })
    ))

  it.effect("does not remember a refusal: a token refused before its nbf is accepted once it is reached", () =>
    withVerifier((provider, verifications) =>
      Effect.gen(function* () {
        const { verify } = yield* JwtVerifier
        const notBefore = Math.floor(Date.now() / 1000) + 10
        const token = yield* Effect.promise(() => provider.sign({ claims: { nbf: notBefore } }))
        expect(Exit.isFailure(yield* Effect.exit(verify(token)))).toBe(true)
        yield* TestClock.setTime(notBefore * 1000)
        yield* verify(token)
        expect(verifications()).toBe(1)
      })
    ))

  // the database's disk_full as the driver reports it (a SqlError made a defect carries it as its cause)
  const diskFull = Effect.die(Object.assign(new Error("could not extend file: No space left on device"), { code: "53100" }))

  it.effect("a known user is read without the upsert when the disk is full: reads go on", () =>
    withVerifier(
      (provider) =>
        Effect.gen(function* () {
          const { verify } = yield* JwtVerifier
          const token = yield* Effect.promise(() => provider.sign({ expiresIn: 3600 }))
          const principal = yield* verify(token)
          expect(principal.id).toBe("user_known")
        }),
      { upsert: diskFull, find: Effect.succeed(Option.some("user_known")) }
    ))

  it.effect("a user never seen, on a full disk, keeps the disk-full failure (its row cannot be written)", () =>
    withVerifier(
      (provider) =>
        Effect.gen(function* () {
          const { verify } = yield* JwtVerifier
          const token = yield* Effect.promise(() => provider.sign({ expiresIn: 3600 }))
          const exit = yield* Effect.exit(verify(token))
          expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        }),
      { upsert: diskFull, find: Effect.succeed(Option.none()) }
    ))
})
