import * as SqlClient from "@effect/sql/SqlClient"
import { Cache, Duration, Effect, Exit, Option } from "effect"
import { AccessDenied, InvalidField } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { notCounted } from "../db/ConnectionLoss.js"
import { causeIsDiskFull } from "../db/DiskFull.js"
import type { PageQuery } from "../db/Paging.js"
import { LabsRepo } from "../labs/LabsRepo.js"
import { Quotas } from "../quotas/Quotas.js"
import { type ApiKey, ApiKeyId, ApiKeyNotFound, type CreateApiKey } from "./ApiKey.js"
import { ApiKeysRepo } from "./ApiKeysRepo.js"
import { covers, isAdmin, parseScope, type Principal } from "./Principal.js"
import { newApiKeySecret, sha256Hex } from "./Secrets.js"

/**
 * How long a verified key is trusted without asking the database again: a revocation on another replica shows here
 * within this (a busy key costs each replica one lookup a second).
 */
const CACHE_TTL = Duration.seconds(1)
/** Keys remembered at most (the least recently used go first): unknown secrets are remembered too. */
const CACHE_CAPACITY = 10_000

const toPrincipal = (key: ApiKey): Principal => ({
  id: key.id,
  kind: "api_key",
  name: key.name,
  scopes: key.scopes,
  expiresAt: key.expiresAt
})

const live = (principal: Option.Option<Principal>, now: number) =>
  Option.isSome(principal) && principal.value.expiresAt !== null && principal.value.expiresAt.getTime() <= now
    ? Option.none()
    : principal

/** What the operations below work with. */
interface Deps {
  readonly repo: ApiKeysRepo
  readonly labs: LabsRepo
  readonly quotas: Quotas
  readonly sql: SqlClient.SqlClient
}

/** A key grants only scopes its creator holds, names only labs that exist, and dies no later than its creator. */
const checkGrant = (deps: Deps, principal: Principal, input: CreateApiKey, scopes: ReadonlyArray<string>, now: Date) =>
  Effect.gen(function* () {
    const denied = scopes.filter((scope) => !covers(principal, scope))
    if (denied.length > 0) {
      return yield* new AccessDenied({ reason: `a key can only grant scopes it holds; not held: ${denied.join(", ")}` })
    }
    const slugs = scopes.flatMap((s) => {
      const scope = parseScope(s)
      return scope?.kind === "lab" ? [scope.slug] : []
    })
    const named = yield* deps.labs.findBySlugs(slugs)
    const known = new Set(named.map((lab) => lab.slug))
    const unknown = slugs.filter((slug) => !known.has(slug))
    if (unknown.length > 0) return yield* new InvalidField({ field: "scopes", problem: `no lab with slug ${unknown.join(", ")}` })
    if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
      return yield* new InvalidField({ field: "expiresAt", problem: "must be in the future" })
    }
    if (principal.expiresAt && (!input.expiresAt || input.expiresAt > principal.expiresAt)) {
      return yield* new InvalidField({
        field: "expiresAt",
        problem: `a key cannot outlive the credential that creates it (${principal.expiresAt.toISOString()})`
      })
    }
    return named
  })

const createKey = (deps: Deps, principal: Principal, input: CreateApiKey) =>
  Effect.gen(function* () {
    const scopes = [...new Set(input.scopes)]
    const now = new Date()
    const named = yield* checkGrant(deps, principal, input, scopes, now)
    const secret = newApiKeySecret()
    const key: ApiKey = {
      id: ApiKeyId.make(newId("key")),
      name: input.name,
      prefix: secret.slice(0, 12),
      scopes,
      createdBy: principal.id,
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      lastUsedAt: null,
      createdAt: now
    }
    // the count of keys naming each lab and the insert, together (quota: QUOTA_API_KEYS)
    yield* deps.sql
      .withTransaction(Effect.zipRight(deps.quotas.apiKeys(named), deps.repo.insert(key, sha256Hex(secret))))
      .pipe(Effect.catchTag("SqlError", Effect.die))
    return { ...key, key: secret }
  })

/** The key, if the principal may see it: one it created, itself, or (the operator) any. */
const visibleKey = (repo: ApiKeysRepo, principal: Principal, id: ApiKeyId) =>
  Effect.flatMap(repo.findById(id), (found) => {
    const visible = Option.filter(found, (key) => isAdmin(principal) || key.createdBy === principal.id || key.id === principal.id)
    return Option.isSome(visible) ? Effect.succeed(visible.value) : Effect.fail(new ApiKeyNotFound({ id }))
  })

export class ApiKeys extends Effect.Service<ApiKeys>()("ApiKeys", {
  dependencies: [ApiKeysRepo.Default, LabsRepo.Default, Quotas.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = { repo: yield* ApiKeysRepo, labs: yield* LabsRepo, quotas: yield* Quotas, sql: yield* SqlClient.SqlClient }
    // grows with every revocation, and is part of the cache key: what a lookup that began before a revocation
    // reads lands under the old generation, where no later request looks
    let revocations = 0
    // by `${generation}:${secret hash}`: the principal of a live key (None for no such key)
    const cache = yield* Cache.makeWith({
      capacity: CACHE_CAPACITY,
      // uninterruptible: the first caller runs it for all who wait on it, and may go away (a client hanging up)
      // the lookup notes the key's use (last_used_at): bookkeeping, which leaves a read a read (ConnectionLoss.ts)
      // on a full disk (53100, ENOSPC) that note cannot be written: the key is read without it, so reads go on
      lookup: (key: string) => {
        const hash = key.slice(key.indexOf(":") + 1)
        const found = notCounted(deps.repo.useByHash(hash)).pipe(
          Effect.catchAllCause((cause) => (causeIsDiskFull(cause) ? deps.repo.findLiveByHash(hash) : Effect.failCause(cause)))
        )
        return Effect.uninterruptible(Effect.map(found, Option.map(toPrincipal)))
      },
      // a failed lookup (the database down) is not remembered
      timeToLive: (exit) => (Exit.isSuccess(exit) ? CACHE_TTL : Duration.zero)
    })

    /**
     * The principal of the key whose secret hashes (sha256, hex) to this, if the
     * key exists, has not expired, and neither it nor a key that created it (up
     * the chain) is revoked. Within CACHE_TTL of the last look, answered from
     * memory; a revocation on this instance empties that memory at once.
     */
    const authenticate = (secretHash: string): Effect.Effect<Option.Option<Principal>> =>
      Effect.flatMap(cache.get(`${revocations}:${secretHash}`), (principal) =>
        Effect.clockWith((clock) => Effect.succeed(live(principal, clock.unsafeCurrentTimeMillis())))
      )

    const list = (principal: Principal, query: PageQuery) => deps.repo.list(query, isAdmin(principal) ? "all" : principal.id)

    /**
     * Revoke a key the principal created (or the principal itself); the operator
     * may revoke any. Every key it created goes with it, transitively, in one
     * statement: a stolen key's offspring die with it.
     */
    const revoke = (principal: Principal, id: ApiKeyId) =>
      Effect.gen(function* () {
        yield* visibleKey(deps.repo, principal, id)
        yield* deps.repo.revoke(id)
        revocations += 1
        yield* cache.invalidateAll
        return Option.getOrThrow(yield* deps.repo.findById(id))
      })

    return { authenticate, create: (principal: Principal, input: CreateApiKey) => createKey(deps, principal, input), list, revoke }
  })
}) {}
