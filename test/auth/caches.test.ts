/**
 * The caches on the authentication path, in virtual time: how long a key, a
 * lab and a JWT are answered from memory, and what ends that at once. The
 * database is embedded PGlite; "another replica" is a write straight to it,
 * which this instance's caches cannot see.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import * as RateLimitStore from "../../layers/RateLimitStore.js"
import { type ApiKey, ApiKeyId } from "../../src/auth/ApiKey.js"
import { ApiKeys } from "../../src/auth/ApiKeys.js"
import { ApiKeysRepo } from "../../src/auth/ApiKeysRepo.js"
import type { Principal } from "../../src/auth/Principal.js"
import { sha256Hex } from "../../src/auth/Secrets.js"
import { Labs } from "../../src/labs/Labs.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { DEFAULT_QUOTAS, QuotaLimits } from "../../src/quotas/PlanQuotas.js"
import { Quotas } from "../../src/quotas/Quotas.js"

const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString("hex")}`

const admin: Principal = { id: "admin", kind: "admin", name: "admin", scopes: ["admin"], expiresAt: null }

/** A key as the service stores it, made straight in the database; its secret is returned. */
const insertKey = (scopes: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const repo = yield* ApiKeysRepo
    const secret = unique("lsk_test")
    const key: ApiKey = {
      id: ApiKeyId.make(unique("key")),
      name: "cached",
      prefix: secret.slice(0, 12),
      scopes,
      createdBy: "admin",
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdAt: new Date()
    }
    yield* repo.insert(key, sha256Hex(secret))
    return { key, hash: sha256Hex(secret) }
  })

/** Another replica revokes the key: this instance is not told. */
const revokeElsewhere = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id}`).pipe(Effect.orDie)

/** The key repository, whose reads of one hash wait at a gate once they have read (a lookup in flight). */
const gatedKeys = (gated: { hash: string; read: Deferred.Deferred<void>; open: Deferred.Deferred<void> }) =>
  Layer.effect(
    ApiKeysRepo,
    Effect.map(ApiKeysRepo, (repo) =>
      ApiKeysRepo.make({
        ...repo,
        useByHash: (hash) =>
          hash !== gated.hash
            ? repo.useByHash(hash)
            : repo.useByHash(hash).pipe(Effect.zipLeft(Deferred.succeed(gated.read, undefined)), Effect.zipLeft(Deferred.await(gated.open)))
      })
    )
  ).pipe(Layer.provide(ApiKeysRepo.Default))

const database = Database.layer({ kind: "pglite", dataDir: undefined })
const support = Layer.mergeAll(RateLimitStore.layer(Option.none()), Layer.succeed(QuotaLimits, DEFAULT_QUOTAS))
const base = Layer.merge(database, support)
/** The tests of `services` on a fresh embedded database, with the base services beside them. */
const onDatabase = <ROut, E>(services: Layer.Layer<ROut, E, Layer.Layer.Success<typeof base>>) =>
  layer(services.pipe(Layer.provideMerge(base)), { timeout: "60 seconds" })

describe("the API key cache", () => {
  onDatabase(Layer.mergeAll(ApiKeys.Default, ApiKeysRepo.Default))((it) => {
    it.effect("trusts a verified key for 1 second: a revocation on another replica shows after that, not before", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const { hash, key } = yield* insertKey(["lab:alpha:r"])
        expect(Option.map(yield* keys.authenticate(hash), (p) => p.id)).toEqual(Option.some(key.id))
        yield* revokeElsewhere(key.id)
        yield* TestClock.adjust("999 millis")
        expect(Option.isSome(yield* keys.authenticate(hash))).toBe(true)
        yield* TestClock.adjust("2 millis")
        expect(Option.isNone(yield* keys.authenticate(hash))).toBe(true)
      }))

    it.effect("an unknown secret is remembered as unknown for 1 second as well", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const repo = yield* ApiKeysRepo
        const secret = unique("lsk_later")
        expect(Option.isNone(yield* keys.authenticate(sha256Hex(secret)))).toBe(true)
        const { key } = yield* insertKey(["lab:alpha:r"])
        // the same key row, now under the secret asked for a moment ago
        yield* repo.insert({ ...key, id: ApiKeyId.make(unique("key")) }, sha256Hex(secret))
        expect(Option.isNone(yield* keys.authenticate(sha256Hex(secret)))).toBe(true)
        yield* TestClock.adjust("1001 millis")
        expect(Option.isSome(yield* keys.authenticate(sha256Hex(secret)))).toBe(true)
      }))

    it.effect("a revocation on this replica stops a cached key at once", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const { hash, key } = yield* insertKey(["lab:alpha:r"])
        expect(Option.isSome(yield* keys.authenticate(hash))).toBe(true)
        yield* keys.revoke(admin, key.id)
        expect(Option.isNone(yield* keys.authenticate(hash))).toBe(true)
      }))
  })

  it.effect("a lookup in flight across a revocation does not put the revoked key back in the cache", () =>
    Effect.gen(function* () {
      const read = yield* Deferred.make<void>()
      const open = yield* Deferred.make<void>()
      const hash = sha256Hex(unique("lsk_gated"))
      const gated = { hash, read, open }
      const test = Effect.gen(function* () {
        const keys = yield* ApiKeys
        const repo = yield* ApiKeysRepo
        const { key } = yield* insertKey(["lab:alpha:r"])
        const gatedId = ApiKeyId.make(unique("key"))
        yield* repo.insert({ ...key, id: gatedId }, hash)
        // the lookup reads the live key, then waits; meanwhile the key is revoked here
        const inFlight = yield* Effect.fork(keys.authenticate(hash))
        yield* Deferred.await(read)
        yield* keys.revoke(admin, gatedId)
        yield* Deferred.succeed(open, undefined)
        // the request that began before the revocation is answered with what it read, as before
        expect(Option.isSome(yield* Fiber.join(inFlight))).toBe(true)
        // but no later one
        expect(Option.isNone(yield* keys.authenticate(hash))).toBe(true)
      })
      yield* test.pipe(
        Effect.provide(
          ApiKeys.DefaultWithoutDependencies.pipe(
            Layer.provideMerge(Layer.mergeAll(gatedKeys(gated), LabsRepo.Default, Quotas.Default)),
            Layer.provideMerge(Layer.merge(database, support))
          )
        )
      )
    }), 60_000)
})

describe("the lab cache", () => {
  onDatabase(Layer.mergeAll(Labs.Default, LabsRepo.Default))((it) => {
    it.effect("keeps a lab for a minute: a plan changed on another replica shows after that, not before", () =>
      Effect.gen(function* () {
        const labs = yield* Labs
        const sql = yield* SqlClient.SqlClient
        const lab = yield* labs.create({ slug: unique("lab"), name: "cached", plan: "free" })
        const principal: Principal = { ...admin, id: "k", kind: "api_key", scopes: [`lab:${lab.slug}:r`] }
        expect(yield* labs.planOf(principal)).toBe("free")
        // creating a lab forgets its id and slug (they may be remembered as misses): the id is cached at its first use
        expect(Option.map(yield* labs.find(lab.id), (l) => l.plan)).toEqual(Option.some("free"))
        yield* sql`UPDATE labs SET plan = 'team' WHERE id = ${lab.id}`.pipe(Effect.orDie)
        yield* TestClock.adjust("60 seconds")
        expect(yield* labs.planOf(principal)).toBe("free")
        expect(Option.map(yield* labs.find(lab.id), (l) => l.plan)).toEqual(Option.some("free"))
        yield* TestClock.adjust("1 millis")
        expect(yield* labs.planOf(principal)).toBe("team")
        expect(Option.map(yield* labs.find(lab.id), (l) => l.plan)).toEqual(Option.some("team"))
      }))

    it.effect("a lab first asked for inside a transaction is read in it (on PGlite's one session the cache's own lookup waited for that transaction)", () =>
      Effect.gen(function* () {
        const labs = yield* Labs
        const sql = yield* SqlClient.SqlClient
        const slug = unique("lab")
        yield* sql`INSERT INTO labs (id, slug, name, plan, created_at, updated_at) VALUES (${unique("lab")}, ${slug}, 'tx', 'pro', now(), now())`.pipe(
          Effect.orDie
        )
        const plan = yield* labs.find(slug).pipe(
          Effect.map(Option.map((l) => l.plan)),
          sql.withTransaction,
          Effect.orDie
        )
        expect(plan).toEqual(Option.some("pro"))
      }))

    it.effect("remembers a missing lab for a second: one created on another replica is found after it", () =>
      Effect.gen(function* () {
        const labs = yield* Labs
        const repo = yield* LabsRepo
        const slug = unique("lab")
        expect(Option.isNone(yield* labs.find(slug))).toBe(true)
        yield* repo.insert({ slug, name: "elsewhere", plan: "pro" })
        expect(Option.isNone(yield* labs.find(slug))).toBe(true)
        yield* TestClock.adjust("1001 millis")
        expect(Option.map(yield* labs.find(slug), (l) => l.plan)).toEqual(Option.some("pro"))
      }))

    it.effect("forgets a miss when this replica creates the lab: it is found at once", () =>
      Effect.gen(function* () {
        const labs = yield* Labs
        const slug = unique("lab")
        expect(Option.isNone(yield* labs.find(slug))).toBe(true)
        yield* labs.create({ slug, name: "here", plan: "pro" })
        expect(Option.map(yield* labs.find(slug), (l) => l.plan)).toEqual(Option.some("pro"))
      }))
  })
})
