import { SqlClient } from "@effect/sql"
import { Cache, Duration, Effect, Exit, Option } from "effect"
import { newId } from "../common/Ids.js"
import { Forbidden, NotFound, ValidationError } from "../http/Errors.js"
import type { PageQuery } from "../http/Pagination.js"
import { LabsRepo } from "../labs/LabsRepo.js"
import { Quotas } from "../quotas/Quotas.js"
import type { ApiKey, CreateApiKey } from "./ApiKey.js"
import { ApiKeysRepo } from "./ApiKeysRepo.js"
import { covers, isAdmin, parseScope, type Principal } from "./Principal.js"
import { newApiKeySecret, sha256Hex } from "./Secrets.js"

/** How long a verified key is trusted without asking the database again. */
const CACHE_TTL = Duration.seconds(5)
/** Keys remembered at most (the least recently used go first): unknown secrets are remembered too. */
const CACHE_CAPACITY = 10_000

const toPrincipal = (key: ApiKey): Principal => ({
  id: key.id,
  kind: "api_key",
  name: key.name,
  scopes: key.scopes,
  expiresAt: key.expiresAt
})

export class ApiKeys extends Effect.Service<ApiKeys>()("ApiKeys", {
  dependencies: [ApiKeysRepo.Default, LabsRepo.Default, Quotas.Default],
  effect: Effect.gen(function* () {
    const repo = yield* ApiKeysRepo
    const labs = yield* LabsRepo
    const quotas = yield* Quotas
    const sql = yield* SqlClient.SqlClient
    // grows with every revocation, and is part of the cache key: what a lookup that began before a revocation
    // reads lands under the old generation, where no later request looks
    let revocations = 0
    // by `${generation}:${secret hash}`: the principal of a live key (None for no such key)
    const cache = yield* Cache.makeWith({
      capacity: CACHE_CAPACITY,
      // uninterruptible: the first caller runs it for all who wait on it, and may go away (a client hanging up)
      lookup: (key: string) => Effect.uninterruptible(Effect.map(repo.useByHash(key.slice(key.indexOf(":") + 1)), Option.map(toPrincipal))),
      // a failed lookup (the database down) is not remembered
      timeToLive: (exit) => (Exit.isSuccess(exit) ? CACHE_TTL : Duration.zero)
    })

    const live = (principal: Option.Option<Principal>, now: number) =>
      Option.isSome(principal) && principal.value.expiresAt !== null && principal.value.expiresAt.getTime() <= now
        ? Option.none()
        : principal

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

    const create = (principal: Principal, input: CreateApiKey) =>
      Effect.gen(function* () {
        const scopes = [...new Set(input.scopes)]
        const denied = scopes.filter((scope) => !covers(principal, scope))
        if (denied.length > 0) {
          return yield* new Forbidden({ message: `a key can only grant scopes it holds; not held: ${denied.join(", ")}` })
        }
        const slugs = scopes.flatMap((s) => {
          const scope = parseScope(s)
          return scope?.kind === "lab" ? [scope.slug] : []
        })
        const named = yield* labs.findBySlugs(slugs)
        const known = new Set(named.map((lab) => lab.slug))
        const unknown = slugs.filter((slug) => !known.has(slug))
        if (unknown.length > 0) {
          return yield* new ValidationError({ message: `scopes: no lab with slug ${unknown.join(", ")}` })
        }
        const now = new Date()
        if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
          return yield* new ValidationError({ message: "expiresAt: must be in the future" })
        }
        if (principal.expiresAt && (!input.expiresAt || input.expiresAt > principal.expiresAt)) {
          return yield* new ValidationError({
            message: `expiresAt: a key cannot outlive the credential that creates it (${principal.expiresAt.toISOString()})`
          })
        }
        const secret = newApiKeySecret()
        const key: ApiKey = {
          id: newId("key"),
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
        yield* sql.withTransaction(Effect.zipRight(quotas.apiKeys(named), repo.insert(key, sha256Hex(secret)))).pipe(
          Effect.catchTag("SqlError", Effect.die)
        )
        return { ...key, key: secret }
      })

    const list = (principal: Principal, query: PageQuery) => repo.list(query, isAdmin(principal) ? "all" : principal.id)

    /**
     * Revoke a key the principal created (or the principal itself); the operator
     * may revoke any. Every key it created goes with it, transitively, in one
     * statement: a stolen key's offspring die with it.
     */
    const revoke = (principal: Principal, id: string) =>
      Effect.gen(function* () {
        const found = yield* repo.findById(id)
        const visible = Option.filter(
          found,
          (key) => isAdmin(principal) || key.createdBy === principal.id || key.id === principal.id
        )
        if (Option.isNone(visible)) return yield* new NotFound({ message: `no API key ${id}` })
        yield* repo.revoke(id)
        revocations += 1
        yield* cache.invalidateAll
        return Option.getOrThrow(yield* repo.findById(id))
      })

    return { authenticate, create, list, revoke }
  })
}) {}
