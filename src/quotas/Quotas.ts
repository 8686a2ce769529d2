import { Effect, Option } from "effect"
import { CurrentPrincipal, isAdmin } from "../auth/Principal.js"
import type { Plan } from "../common/Schemas.js"
import { QuotaExceeded, RateLimited } from "../http/Errors.js"
import { reportWindow } from "../http/RequestContext.js"
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

/**
 * The per-lab quotas of the lab's plan (src/quotas/PlanQuotas.ts). The
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

    /** The lab's plan (free, the smallest, for a lab that is gone). */
    const planOf = (labId: string): Effect.Effect<Plan> =>
      Effect.map(labs.find(labId), (lab) => Option.match(lab, { onNone: (): Plan => "free", onSome: (l) => l.plan }))

    const exceeded = (plan: Plan, quota: string, use: string, hint: string) =>
      new QuotaExceeded({ message: `quota exceeded: ${quota} of the ${plan} plan (${use}); ${hint}` })

    /** Before a key naming these labs is created. */
    const apiKeys = (named: ReadonlyArray<Lab>) =>
      Effect.forEach(
        [...named].sort((a, b) => (a.id < b.id ? -1 : 1)),
        (lab) =>
          Effect.gen(function* () {
            const limit = limits[lab.plan].apiKeys
            yield* repo.lock("keys", lab.id)
            const live = yield* repo.liveKeysNaming(lab.slug)
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
    const runningPods = (labId: string, podId: string) =>
      Effect.gen(function* () {
        const plan = yield* planOf(labId)
        const limit = limits[plan].runningPods
        yield* repo.lock("pods", labId)
        const active = yield* repo.activePods(labId, podId)
        if (active + 1 > limit) {
          return yield* exceeded(plan, "running pods", `${active} of ${limit} starting or running`, "stop a pod before starting another")
        }
      })

    /**
     * Before something grows the lab's stored bytes by `growth`: a file write, a
     * backup's archive. What does not grow them always passes.
     */
    const storedBytes = (labId: string, growth: number, what = "this write") =>
      growth <= 0
        ? Effect.void
        : Effect.gen(function* () {
            const plan = yield* planOf(labId)
            const limit = limits[plan].storedBytes
            yield* repo.lock("bytes", labId)
            const used = yield* repo.storedBytes(labId)
            if (used + growth > limit) {
              return yield* exceeded(
                plan,
                "stored bytes (files and backups)",
                `${formatBytes(used)} used, ${what} adds ${formatBytes(growth)}, limit ${formatBytes(limit)}`,
                "delete files or backups to make room"
              )
            }
          })

    /** Before a backup is created: a slot among the backups kept, and room left in stored bytes. */
    const newBackup = (labId: string) =>
      Effect.gen(function* () {
        const plan = yield* planOf(labId)
        const quota: PlanQuotas = limits[plan]
        const kept = yield* repo.backups(labId)
        if (kept + 1 > quota.backupsKept) {
          return yield* exceeded(plan, "backups kept", `${kept} of ${quota.backupsKept}`, "delete an old backup first")
        }
        const used = yield* repo.storedBytes(labId)
        if (used >= quota.storedBytes) {
          return yield* exceeded(
            plan,
            "stored bytes (files and backups)",
            `${formatBytes(used)} of ${formatBytes(quota.storedBytes)} used`,
            "delete files or backups to make room"
          )
        }
      })

    /**
     * A forced sync of the lab (POST /api/v1/sync): at most the plan's number per
     * calendar minute. A rate, like the lab's budget: the operator is not counted.
     */
    const forcedSync = (lab: Lab) =>
      Effect.gen(function* () {
        if (isAdmin(yield* CurrentPrincipal)) return
        const limit = limits[lab.plan].forcedSyncsPerMinute
        const decision = yield* rateLimits.count(`sync:${lab.id}`, limit, MINUTE_MILLIS)
        yield* reportWindow(decision)
        if (!decision.allowed) {
          return yield* new RateLimited({
            message: `lab ${lab.slug} may force ${limit} syncs a minute on the ${lab.plan} plan; retry in ${decision.retryAfter} s (pushes with a webhook sync without asking)`
          })
        }
      })

    return { apiKeys, runningPods, storedBytes, newBackup, forcedSync }
  })
}) {}
