/**
 * Cache-hit benchmark of the authentication path: ApiKeys.authenticate and
 * Labs.find answered from their Effect `Cache`, against the hand-made
 * `Map` + `Date.now()` hit they replaced (reproduced below as the reference),
 * both run in this process, alternating rounds, on in-memory PGlite.
 * `bench:http` uses the operator's key, which never reaches the key cache.
 *
 *   npx tsx scripts/bench-auth-cache.ts
 *
 * Knobs: BENCH_HITS (hits per round, 200000), BENCH_ROUNDS (5).
 */
import { Effect, Layer, Option } from "effect"
import * as Database from "../layers/Database.js"
import * as RateLimitStore from "../layers/RateLimitStore.js"
import { ApiKeyId } from "../src/auth/ApiKey.js"
import { ApiKeys } from "../src/auth/ApiKeys.js"
import { ApiKeysRepo } from "../src/auth/ApiKeysRepo.js"
import { sha256Hex } from "../src/auth/Secrets.js"
import { Labs } from "../src/labs/Labs.js"
import { DEFAULT_QUOTAS, QuotaLimits } from "../src/quotas/PlanQuotas.js"

const HITS = Number(process.env.BENCH_HITS ?? 200_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

/** The replaced hit path: a Map read, a Date.now() comparison, Effect.succeed. */
const handMade = <A>(value: A, ttlMillis: number) => {
  const map = new Map<string, { readonly value: A; readonly at: number }>()
  return (key: string): Effect.Effect<A> => {
    const now = Date.now()
    const hit = map.get(key)
    if (hit && now - hit.at < ttlMillis) return Effect.succeed(hit.value)
    map.set(key, { value, at: now })
    return Effect.succeed(value)
  }
}

const timeHits = <A>(get: (key: string) => Effect.Effect<A>, key: string) =>
  Effect.gen(function* () {
    const started = process.hrtime.bigint()
    for (let i = 0; i < HITS; i++) yield* get(key)
    return Number(process.hrtime.bigint() - started) / HITS / 1_000 // µs per hit
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN

const program = Effect.gen(function* () {
  const keys = yield* ApiKeys
  const labs = yield* Labs
  const repo = yield* ApiKeysRepo
  const lab = yield* labs.create({ slug: "bench", name: "bench", plan: "free" })
  const hash = sha256Hex("lsk_bench_secret")
  yield* repo.insert(
    {
      id: ApiKeyId.make("key_bench"),
      name: "bench",
      prefix: "lsk_bench_se",
      scopes: ["lab:bench:r"],
      createdBy: "admin",
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdAt: new Date()
    },
    hash
  )
  const principal = Option.getOrThrow(yield* keys.authenticate(hash))
  const keyRef = handMade(Option.some(principal), 5_000)
  const labRef = handMade(Option.some(lab), 60_000)
  const key = { name: "ApiKeys.authenticate", cache: [] as Array<number>, reference: [] as Array<number> }
  const labRow = { name: "Labs.find", cache: [] as Array<number>, reference: [] as Array<number> }
  for (let round = 0; round < ROUNDS; round++) {
    key.cache.push(yield* timeHits(keys.authenticate, hash))
    key.reference.push(yield* timeHits(keyRef, hash))
    labRow.cache.push(yield* timeHits(labs.find, lab.id))
    labRow.reference.push(yield* timeHits(labRef, lab.id))
  }
  console.log(`\nCache hits, µs per hit (median of ${ROUNDS} rounds of ${HITS})\n`)
  console.log("| path                 | Effect Cache | Map + Date.now() (reference) | ratio |")
  console.log("|----------------------|-------------:|-----------------------------:|------:|")
  for (const { name, cache, reference } of [key, labRow]) {
    const c = median(cache)
    const r = median(reference)
    console.log(`| ${name.padEnd(20)} | ${c.toFixed(3).padStart(12)} | ${r.toFixed(3).padStart(28)} | ${(c / r).toFixed(2).padStart(5)} |`)
  }
})

const services = Layer.mergeAll(ApiKeys.Default, Labs.Default, ApiKeysRepo.Default).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Database.layer({ kind: "pglite", dataDir: undefined }),
      RateLimitStore.layer(Option.none()),
      Layer.succeed(QuotaLimits, DEFAULT_QUOTAS)
    )
  )
)

Effect.runPromise(Effect.provide(program, services)).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
