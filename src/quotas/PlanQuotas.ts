import { Context } from "effect"
import type { Plan } from "../common/Schemas.js"

/** What a lab may hold or do, by its plan. Each is set by an environment variable (layers/Config.ts). */
export interface PlanQuotas {
  /** Live API keys (neither revoked nor expired) whose scopes name the lab. QUOTA_API_KEYS */
  readonly apiKeys: number
  /** Pods starting or running, or stopping to start again. QUOTA_RUNNING_PODS */
  readonly runningPods: number
  /** Bytes of the lab's files (synced ones included) plus its backups' archives. QUOTA_STORED_BYTES */
  readonly storedBytes: number
  /** Backups the lab holds, whatever their status. QUOTA_BACKUPS_KEPT */
  readonly backupsKept: number
  /** Forced syncs (POST /api/v1/sync) per calendar minute: a rate, answered 429. QUOTA_FORCED_SYNCS_PER_MINUTE */
  readonly forcedSyncsPerMinute: number
  /** Rows the lab holds across its resources (files, tasks, metrics…: src/quotas/RecordsQuota.ts). QUOTA_RECORDS */
  readonly records: number
}

const GiB = 1024 ** 3

/**
 * Sized so that a working lab never meets them and a lab that mints keys,
 * starts pods or stores archives in a loop is stopped early: the abuse seen was
 * 40 pod processes (1.7 GB), unbounded files and backups, 40 forced syncs in a row.
 */
export const DEFAULT_QUOTAS: Readonly<Record<Plan, PlanQuotas>> = {
  free: { apiKeys: 20, runningPods: 2, storedBytes: 1 * GiB, backupsKept: 5, forcedSyncsPerMinute: 6, records: 200_000 },
  pro: { apiKeys: 100, runningPods: 8, storedBytes: 10 * GiB, backupsKept: 20, forcedSyncsPerMinute: 20, records: 2_000_000 },
  team: { apiKeys: 500, runningPods: 32, storedBytes: 100 * GiB, backupsKept: 100, forcedSyncsPerMinute: 60, records: 20_000_000 }
}

/** The quotas of each plan on this instance. */
export class QuotaLimits extends Context.Tag("QuotaLimits")<QuotaLimits, Readonly<Record<Plan, PlanQuotas>>>() {}
