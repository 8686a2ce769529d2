import { Effect, Option } from "effect"
import { CurrentPrincipal, isAdmin } from "../auth/Principal.js"
import type { Plan } from "../common/Schemas.js"
import { OverQuota, OverRateLimit } from "../common/DomainErrors.js"
import { reportWindow } from "../common/RequestContext.js"
import type { Lab } from "../labs/Lab.js"
import { Labs } from "../labs/Labs.js"
import { MINUTE_MILLIS, RateLimits } from "../ratelimit/RateLimits.js"
import { type PlanQuotas, QuotaLimits } from "./PlanQuotas.js"
import { QuotasRepo } from "./QuotasRepo.js"

const formatBytes = (bytes: number): string => {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit += 1
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`
}

/** What the checks below work with. */
interface Deps {
  readonly repo: QuotasRepo
  readonly limits: Readonly<Record<Plan, PlanQuotas>>
  /** The lab's plan (free, the smallest, for a lab that is gone). */
  readonly planOf: (labId: string) => Effect.Effect<Plan>
}

const exceeded = (plan: Plan, quota: string, use: string, hint: string) =>
  new OverQuota({ quota, reason: `quota exceeded: ${quota} of the ${plan} plan (${use}); ${hint}` })

const STORED_BYTES = "stored bytes (files and backups)"
const MAKE_ROOM = "delete files or backups to make room"

/** Before a key naming these labs is created. */
const apiKeysQuota = (deps: Deps, named: ReadonlyArray<Lab>) =>
  Effect.forEach(
    [...named].sort((a, b) => (a.id < b.id ? -1 : 1)),
    (lab) =>
      Effect.gen(function* () {
        const limit = deps.limits[lab.plan].apiKeys
        yield* deps.repo.lock("keys", lab.id)
        const live = yield* deps.repo.liveKeysNaming(lab.slug)
        if (live + 1 > limit) {
          return yield* exceeded(
            lab.plan,
            `API keys naming lab ${lab.slug}`,
            `${live} of ${limit} live`,
            "revoke a key (its descendants go with it) before creating another"
          )
        }
      }),
    { discard: true }
  )

/** Before a pod of the lab starts (or is asked to start again). */
const runningPodsQuota = (deps: Deps, labId: string, podId: string) =>
  Effect.gen(function* () {
    const plan = yield* deps.planOf(labId)
    const limit = deps.limits[plan].runningPods
    yield* deps.repo.lock("pods", labId)
    const active = yield* deps.repo.activePods(labId, podId)
    if (active + 1 > limit) {
      return yield* exceeded(plan, "running pods", `${active} of ${limit} starting or running`, "stop a pod before starting another")
    }
  })

/**
 * Before something grows the lab's stored bytes by `growth`: a file write, a
 * backup's archive. What does not grow them always passes.
 */
const storedBytesQuota = (deps: Deps, labId: string, growth: number, what: string) =>
  growth <= 0
    ? Effect.void
    : Effect.gen(function* () {
        const plan = yield* deps.planOf(labId)
        const limit = deps.limits[plan].storedBytes
        yield* deps.repo.lock("bytes", labId)
        const used = yield* deps.repo.storedBytes(labId)
        if (used + growth > limit) {
          const use = `${formatBytes(used)} used, ${what} adds ${formatBytes(growth)}, limit ${formatBytes(limit)}`
          return yield* exceeded(plan, STORED_BYTES, use, MAKE_ROOM)
        }
      })

/** Before a backup is created: a slot among the backups kept, and room left in stored bytes. */
const newBackupQuota = (deps: Deps, labId: string) =>
  Effect.gen(function* () {
    const plan = yield* deps.planOf(labId)
    const quota = deps.limits[plan]
    const kept = yield* deps.repo.backups(labId)
    if (kept + 1 > quota.backupsKept) {
      return yield* exceeded(plan, "backups kept", `${kept} of ${quota.backupsKept}`, "delete an old backup first")
    }
    const used = yield* deps.repo.storedBytes(labId)
    if (used >= quota.storedBytes) {
      return yield* exceeded(plan, STORED_BYTES, `${formatBytes(used)} of ${formatBytes(quota.storedBytes)} used`, MAKE_ROOM)
    }
  })

/**
 * A forced sync of the lab (POST /api/v1/sync): at most the plan's number per
 * calendar minute. A rate, like the lab's budget: the operator is not counted.
 */
const forcedSyncRate = (deps: Deps, rateLimits: RateLimits, lab: Lab) =>
  Effect.gen(function* () {
    if (isAdmin(yield* CurrentPrincipal)) return
    const limit = deps.limits[lab.plan].forcedSyncsPerMinute
    const account = `sync:${lab.id}`
    const decision = yield* rateLimits.count(account, limit, MINUTE_MILLIS)
    yield* reportWindow({ account, decision })
    if (!decision.allowed) {
      return yield* new OverRateLimit({
        reason: `lab ${lab.slug} may force ${limit} syncs a minute on the ${lab.plan} plan; retry in ${decision.retryAfter} s (pushes with a webhook sync without asking)`,
        retryAfter: decision.retryAfter
      })
    }
  })

/**
 * The per-lab quotas of the lab's plan (src/quotas/PlanQuotas.ts). Lab ids are plain strings here: the callers
 * are services that checked the lab already, and background jobs (a backup's archive) on the service's own rows. The
 * allocation checks run inside the caller's transaction, before it writes, and
 * fail with 403 quota_exceeded naming the quota, the use and the limit; forced
 * syncs are a rate and fail with 429 rate_limited.
 */
export class Quotas extends Effect.Service<Quotas>()("Quotas", {
  dependencies: [QuotasRepo.Default, Labs.Default, RateLimits.Default],
  effect: Effect.gen(function* () {
    const repo = yield* QuotasRepo
    const labs = yield* Labs
    const rateLimits = yield* RateLimits
    const limits = yield* QuotaLimits
    yield* repo.setRecordLimits((["free", "pro", "team"] as const).map((plan) => ({ plan, records: limits[plan].records })))
    const planOf = (labId: string): Effect.Effect<Plan> =>
      Effect.map(labs.find(labId), (lab) => Option.match(lab, { onNone: (): Plan => "free", onSome: (l) => l.plan }))
    const deps: Deps = { repo, limits, planOf }

    return {
      apiKeys: (named: ReadonlyArray<Lab>) => apiKeysQuota(deps, named),
      runningPods: (labId: string, podId: string) => runningPodsQuota(deps, labId, podId),
      storedBytes: (labId: string, growth: number, what = "this write") => storedBytesQuota(deps, labId, growth, what),
      newBackup: (labId: string) => newBackupQuota(deps, labId),
      /** Before a restore replaces the lab's files with a backup's, which hold `archivedFileBytes`. */
      restoredFiles: (labId: string, archivedFileBytes: number) =>
        Effect.flatMap(repo.fileBytes(labId), (current) => storedBytesQuota(deps, labId, archivedFileBytes - current, "this restore")),
      forcedSync: (lab: Lab) => forcedSyncRate(deps, rateLimits, lab)
    }
  })
}) {}
