import { Config, ConfigError, Either, Option, Redacted } from "effect"
import type { Plan } from "../src/common/Schemas.js"
import { DEFAULT_QUOTAS, type PlanQuotas } from "../src/quotas/PlanQuotas.js"
import { NO_EXCEPTIONS, parseAllowedHosts } from "../src/sync/HostPolicy.js"
import { DEFAULT_WEBHOOK_FAILURES_PER_MINUTE } from "../src/sync/Webhooks.js"
import { DEFAULT_JOB_SLOTS } from "../src/sync/JobSlots.js"
import { DEFAULT_CEILINGS } from "./git/Fetch.js"
import { DEFAULT_PHASES } from "./git/Transport.js"
import { DEFAULT_CONNECTION_LIMITS } from "./ConnectionLimits.js"
import { DEFAULT_REDIS_RETRY_MILLIS } from "./RedisFallback.js"
import { DEFAULT_STOP } from "./Stop.js"
import { DEFAULT_DISK_RESERVE_BYTES } from "./DiskSpaceWatch.js"
import { DEFAULT_IDEMPOTENCY } from "../src/idempotency/IdempotencyKeys.js"

/**
 * A secret validated as a plain string, then redacted. (Validating after
 * `Config.redacted` or `Config.map` loses the variable's name in the error, and
 * `Config.redacted` replaces the message with "<redacted>"; these messages never
 * contain the value.)
 */
const secret = (name: string, check: { readonly message: string; readonly validation: (value: string) => boolean }) =>
  Config.string(name).pipe(Config.validate(check), Config.map(Redacted.make))

const hex64 = (name: string) =>
  secret(name, { message: "must be 64 hexadecimal characters (32 bytes)", validation: (v) => /^[0-9a-fA-F]{64}$/.test(v) })

const postgresUrl = secret("DATABASE_URL", {
  message: "must be a postgres:// or postgresql:// URL",
  validation: (v) => /^postgres(ql)?:\/\//.test(v)
})

const algorithmList = (s: string) => s.split(",").map((a) => a.trim()).filter((a) => a.length > 0)

const positive = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

const nonNegative = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a whole number, 0 or more", validation: (n) => n >= 0 }),
    Config.withDefault(fallback)
  )

const UNITS: Readonly<Record<string, number>> = { "": 1, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3, TIB: 1024 ** 4 }

/** A whole number, with a binary unit when `bytes` (10GiB, 512MiB). */
const quantity = (text: string, bytes: boolean): number | undefined => {
  const match = /^\s*(\d+)\s*([KMGT]iB)?\s*$/i.exec(text)
  if (!match?.[1] || (!bytes && match[2] !== undefined)) return undefined
  const n = Number(match[1]) * (UNITS[(match[2] ?? "").toUpperCase()] ?? Number.NaN)
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

/** One quota for the three plans: `free,pro,team`, each a positive whole number. */
const perPlan = (name: string, key: keyof PlanQuotas, bytes = false) =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const values = text.split(",").map((part) => quantity(part, bytes))
      const [free, pro, team] = values
      return values.length === 3 && free !== undefined && pro !== undefined && team !== undefined
        ? Either.right({ free, pro, team })
        : Either.left(
            ConfigError.InvalidData(
              [name],
              `must be three positive whole numbers for the free, pro and team plans, such as ${[DEFAULT_QUOTAS.free[key], DEFAULT_QUOTAS.pro[key], DEFAULT_QUOTAS.team[key]].join(",")}${bytes ? " (bytes; KiB, MiB, GiB or TiB may follow a number)" : ""}`
            )
          )
    }),
    Config.withDefault({ free: DEFAULT_QUOTAS.free[key], pro: DEFAULT_QUOTAS.pro[key], team: DEFAULT_QUOTAS.team[key] })
  )

/** Per-lab quotas by plan (src/quotas/PlanQuotas.ts). */
const quotas = Config.all({
  apiKeys: perPlan("QUOTA_API_KEYS", "apiKeys"),
  runningPods: perPlan("QUOTA_RUNNING_PODS", "runningPods"),
  storedBytes: perPlan("QUOTA_STORED_BYTES", "storedBytes", true),
  backupsKept: perPlan("QUOTA_BACKUPS_KEPT", "backupsKept"),
  forcedSyncsPerMinute: perPlan("QUOTA_FORCED_SYNCS_PER_MINUTE", "forcedSyncsPerMinute"),
  records: perPlan("QUOTA_RECORDS", "records")
}).pipe(
  Config.map((q): Record<Plan, PlanQuotas> => {
    const of = (plan: Plan): PlanQuotas => ({
      apiKeys: q.apiKeys[plan],
      runningPods: q.runningPods[plan],
      storedBytes: q.storedBytes[plan],
      backupsKept: q.backupsKept[plan],
      forcedSyncsPerMinute: q.forcedSyncsPerMinute[plan],
      records: q.records[plan]
    })
    return { free: of("free"), pro: of("pro"), team: of("team") }
  })
)

const jwt = Config.option(Config.url("JWT_JWKS_URL")).pipe(
  Config.zipWith(
    Config.all({
      issuer: Config.option(Config.nonEmptyString("JWT_ISSUER")),
      audience: Config.option(Config.nonEmptyString("JWT_AUDIENCE")),
      algorithms: Config.string("JWT_ALGORITHMS").pipe(
        Config.validate({
          message: "must list JWS algorithms such as RS256,ES256 (none is never allowed)",
          validation: (s) => {
            const algs = algorithmList(s)
            return algs.length > 0 && algs.every((a) => /^(RS|PS|ES)(256|384|512)$|^EdDSA$/.test(a))
          }
        }),
        Config.withDefault("RS256,ES256"),
        Config.map(algorithmList)
      ),
      scopeClaim: Config.string("JWT_SCOPE_CLAIM").pipe(Config.withDefault("scope"))
    }),
    (jwksUrl, rest) => ({ jwksUrl, ...rest })
  ),
  Config.validate({
    message: "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE",
    validation: (c) => Option.isNone(c.jwksUrl) || (Option.isSome(c.issuer) && Option.isSome(c.audience))
  })
)

/** GIT_ALLOWED_HOSTS: validated (the message says what is wrong), then parsed. */
const allowedHosts = Config.string("GIT_ALLOWED_HOSTS").pipe(
  Config.withDefault(""),
  Config.validate({
    message: "must be a comma-separated list of host[:port], IP addresses ([v6]:port for a port) or CIDR blocks",
    validation: (s) => Either.isRight(parseAllowedHosts(s))
  }),
  Config.map((s) => Either.getOrElse(parseAllowedHosts(s), () => NO_EXCEPTIONS))
)

/** Slow or dead git hosts (README "Slow or dead git hosts"): time limits of an exchange, and the job pools. */
const DEFAULT_GIT_TIMEOUT_MILLIS = 60_000
const gitHosts = Config.all({
  timeoutMillis: positive("GIT_TIMEOUT_MS", DEFAULT_GIT_TIMEOUT_MILLIS),
  phases: Config.all({
    connectMillis: positive("GIT_CONNECT_TIMEOUT_MS", DEFAULT_PHASES.connectMillis),
    responseMillis: positive("GIT_RESPONSE_TIMEOUT_MS", DEFAULT_PHASES.responseMillis),
    idleMillis: positive("GIT_IDLE_TIMEOUT_MS", DEFAULT_PHASES.idleMillis)
  }),
  slots: Config.all({
    jobs: positive("GIT_JOB_SLOTS", DEFAULT_JOB_SLOTS.jobs),
    retryJobs: positive("GIT_RETRY_JOB_SLOTS", DEFAULT_JOB_SLOTS.retryJobs),
    probes: positive("GIT_PROBE_SLOTS", DEFAULT_JOB_SLOTS.probes),
    retryProbes: positive("GIT_RETRY_PROBE_SLOTS", DEFAULT_JOB_SLOTS.retryProbes),
    stallMillis: positive("GIT_SLOT_STALL_MS", DEFAULT_JOB_SLOTS.stallMillis)
  })
})

/** DISK_RESERVE_BYTES: free space under DATA_DIR below which writes are refused (507); a size such as 256MiB, 0 to never refuse. */
const diskReserveBytes = Config.string("DISK_RESERVE_BYTES").pipe(
  Config.mapOrFail((text) => {
    const bytes = /^\s*0+\s*$/.test(text) ? 0 : quantity(text, true)
    return bytes === undefined
      ? Either.left(ConfigError.InvalidData(["DISK_RESERVE_BYTES"], "must be a whole number of bytes, 0 or more (KiB, MiB, GiB or TiB may follow it), such as 256MiB"))
      : Either.right(bytes)
  }),
  Config.withDefault(DEFAULT_DISK_RESERVE_BYTES)
)

/** Every setting, read once at start. A bad value stops the start with a message naming the variable. */
export const AppConfig = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  databaseUrl: Config.option(postgresUrl),
  redisUrl: Config.option(Config.url("REDIS_URL")),
  publicBaseUrl: Config.option(Config.url("PUBLIC_BASE_URL")),
  adminApiKey: Config.option(
    secret("ADMIN_API_KEY", { message: "must be at least 24 characters", validation: (v) => v.length >= 24 })
  ),
  masterKey: Config.option(hex64("SECRETS_MASTER_KEY")),
  jwt,
  git: Config.all({
    allowedHosts,
    ceilings: Config.all({
      maxPackBytes: positive("GIT_MAX_PACK_BYTES", DEFAULT_CEILINGS.maxPackBytes),
      maxObjects: positive("GIT_MAX_OBJECTS", DEFAULT_CEILINGS.maxObjects),
      maxInflatedBytes: positive("GIT_MAX_INFLATED_BYTES", DEFAULT_CEILINGS.maxInflatedBytes)
    })
  }),
  adminLimits: Config.all({
    perMinute: positive("RATE_LIMIT_ADMIN_PER_MINUTE", 10_000),
    perDay: positive("RATE_LIMIT_ADMIN_PER_DAY", 10_000_000)
  }),
  quotas,
  gitHosts,
  webhookFailuresPerMinute: positive("WEBHOOK_FAILURES_PER_MINUTE", DEFAULT_WEBHOOK_FAILURES_PER_MINUTE),
  idempotencyKeysMax: positive("IDEMPOTENCY_KEYS_MAX", DEFAULT_IDEMPOTENCY.maxKeys),
  // issue 21 (ops): how often a Redis known to be away is tried again; request deadlines and connection caps
  redisRetryMillis: positive("RATE_LIMIT_REDIS_RETRY_MS", DEFAULT_REDIS_RETRY_MILLIS),
  connections: Config.all({
    headersMillis: positive("HTTP_HEADERS_TIMEOUT_MS", DEFAULT_CONNECTION_LIMITS.headersMillis),
    requestMillis: positive("HTTP_REQUEST_TIMEOUT_MS", DEFAULT_CONNECTION_LIMITS.requestMillis),
    maxConnections: positive("HTTP_MAX_CONNECTIONS", DEFAULT_CONNECTION_LIMITS.maxConnections),
    maxPerAddress: positive("HTTP_MAX_CONNECTIONS_PER_ADDRESS", DEFAULT_CONNECTION_LIMITS.maxPerAddress)
  }).pipe(
    Config.validate({
      message: "HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)",
      validation: (c) => c.headersMillis <= c.requestMillis
    })
  ),
  stop: Config.all({
    drainMillis: nonNegative("STOP_DRAIN_MS", DEFAULT_STOP.drainMillis),
    requestsMillis: positive("STOP_REQUESTS_MS", DEFAULT_STOP.requestsMillis)
  }),
  diskReserveBytes
})
export type AppConfig = Config.Config.Success<typeof AppConfig>
