/** The QUOTA_* settings: defaults, per-plan triples, byte units, and a clear error naming the variable. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { AppConfig } from "../../layers/Config.js"
import { DEFAULT_QUOTAS } from "../../src/quotas/PlanQuotas.js"

const readConfig = (env: Record<string, string>) =>
  Effect.withConfigProvider(AppConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("QUOTA_* settings", () => {
  it.effect("default to the documented figures", () =>
    Effect.gen(function* () {
      const config = yield* readConfig({})
      expect(config.quotas).toEqual(DEFAULT_QUOTAS)
      expect(config.quotas.free).toEqual({ apiKeys: 20, runningPods: 2, storedBytes: 1024 ** 3, backupsKept: 5, forcedSyncsPerMinute: 6, records: 200_000 })
      expect(config.quotas.team.storedBytes).toBe(100 * 1024 ** 3)
      expect(config.webhookFailuresPerMinute).toBe(10)
    })
  )

  it.effect("read free,pro,team for each quota; bytes may carry a binary unit", () =>
    Effect.gen(function* () {
      const config = yield* readConfig({
        QUOTA_API_KEYS: "1,2,3",
        QUOTA_RUNNING_PODS: " 4, 5 ,6",
        QUOTA_STORED_BYTES: "512MiB,2GiB,1099511627776",
        QUOTA_BACKUPS_KEPT: "7,8,9",
        QUOTA_FORCED_SYNCS_PER_MINUTE: "10,11,12",
        QUOTA_RECORDS: "100,200,300"
      })
      expect(config.quotas).toEqual({
        free: { apiKeys: 1, runningPods: 4, storedBytes: 512 * 1024 ** 2, backupsKept: 7, forcedSyncsPerMinute: 10, records: 100 },
        pro: { apiKeys: 2, runningPods: 5, storedBytes: 2 * 1024 ** 3, backupsKept: 8, forcedSyncsPerMinute: 11, records: 200 },
        team: { apiKeys: 3, runningPods: 6, storedBytes: 1024 ** 4, backupsKept: 9, forcedSyncsPerMinute: 12, records: 300 }
      })
    })
  )

  it.effect("refuse anything else with a message naming the variable and the expected form", () =>
    Effect.gen(function* () {
      const bad: ReadonlyArray<readonly [string, string]> = [
        ["QUOTA_API_KEYS", "20,100"],
        ["QUOTA_API_KEYS", "20,100,500,1"],
        ["QUOTA_RUNNING_PODS", "0,8,32"],
        ["QUOTA_RUNNING_PODS", "-1,8,32"],
        ["QUOTA_BACKUPS_KEPT", "5,20,lots"],
        ["QUOTA_FORCED_SYNCS_PER_MINUTE", "6GiB,20,60"],
        ["QUOTA_STORED_BYTES", "1GB,10GiB,100GiB"],
        ["QUOTA_STORED_BYTES", "99999999999TiB,1,1"]
      ]
      for (const [name, value] of bad) {
        const result = yield* Effect.either(readConfig({ [name]: value }))
        expect(Either.isLeft(result), `${name}=${value}`).toBe(true)
        if (Either.isLeft(result)) {
          expect(String(result.left)).toContain(name)
          expect(String(result.left)).toMatch(/free, pro and team/)
        }
      }
    })
  )
})
