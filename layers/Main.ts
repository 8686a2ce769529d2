import { Cause, Effect, Layer, Option, Predicate } from "effect"
import { chmod, mkdir, stat } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import { causeIsDiskFull } from "../src/db/DiskFull.js"
import { mebibytes } from "../src/status/DiskSpace.js"
import * as App from "./App.js"
import * as Bootstrap from "./Bootstrap.js"
import { AppConfig } from "./Config.js"
import { freeBytesUnder } from "./DiskSpaceWatch.js"
import * as StartupMemory from "./StartupMemory.js"
import * as Tracing from "./Tracing.js"
import * as LocalProcessProvider from "./pods/LocalProcessProvider.js"
import { DEFAULT_IDEMPOTENCY } from "../src/idempotency/IdempotencyKeys.js"

/**
 * DATA_DIR holds the keys, the embedded database and the labs' repositories:
 * they are the service user's alone. The umask (per process: PGlite's worker
 * threads and git's child processes inherit it) makes everything created from
 * here on 0700/0600; DATA_DIR itself is created 0700, or tightened to 0700 when
 * an earlier start or the operator left it open to others.
 */
const privateDataDir = (dataDir: string) =>
  Effect.tryPromise({
    try: async () => {
      process.umask(0o077)
      await mkdir(dataDir, { recursive: true, mode: 0o700 })
      const { mode } = await stat(dataDir)
      if ((mode & 0o077) === 0) return false
      await chmod(dataDir, 0o700)
      return true
    },
    catch: (cause) => new Error(`cannot create DATA_DIR ${dataDir} (mode 0700): ${String(cause)}`)
  })

/**
 * The deployment: settings from the environment (layers/Config.ts), PostgreSQL
 * when DATABASE_URL is set (Live), embedded PGlite under DATA_DIR otherwise
 * (Embedded), the operator's first key, then the server.
 */
export const MainLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const tracing = yield* Tracing.TracingSettings
    const dataDir = resolve(config.dataDir)
    if (yield* privateDataDir(dataDir)) yield* Effect.logWarning(`DATA_DIR ${dataDir} was open to other users: now 0700`)
    const admin = yield* Bootstrap.adminKey(dataDir, config.adminApiKey)
    const master = yield* Bootstrap.masterKey(dataDir, config.masterKey)
    if (admin.created) yield* Effect.logInfo(`generated the operator's admin key into ${Option.getOrElse(admin.path, () => "")}`)
    if (master.created && Option.isSome(config.databaseUrl)) {
      yield* Effect.logWarning(
        `generated SECRETS_MASTER_KEY into ${Option.getOrElse(master.path, () => "")}: replicas sharing DATABASE_URL must all use the same key`
      )
    }
    const database = Option.match(config.databaseUrl, {
      onNone: () => ({ kind: "pglite" as const, dataDir: join(dataDir, "pglite") }),
      onSome: (url) => ({ kind: "postgresql" as const, url })
    })
    const publicBaseUrl = Option.getOrElse(
      config.publicBaseUrl,
      () => new URL(`http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}`)
    )
    yield* Effect.logInfo(
      `lab-service on http://${config.host}:${config.port} (database: ${database.kind}, rate limits: ${Option.isSome(config.redisUrl) ? "redis" : "memory"})`
    )
    return App.server({
      port: config.port,
      host: config.host,
      database,
      redisUrl: config.redisUrl,
      redisRetryMillis: config.redisRetryMillis,
      adminKey: admin.secret,
      masterKey: master.secret,
      jwt: Option.map(config.jwt.jwksUrl, (jwksUrl) => ({
        jwksUrl,
        issuer: Option.getOrElse(config.jwt.issuer, () => ""),
        audience: Option.getOrElse(config.jwt.audience, () => ""),
        algorithms: config.jwt.algorithms,
        scopeClaim: config.jwt.scopeClaim
      })),
      adminLimits: config.adminLimits,
      quotas: config.quotas,
      webhookFailuresPerMinute: config.webhookFailuresPerMinute,
      idempotency: { ...DEFAULT_IDEMPOTENCY, maxKeys: config.idempotencyKeysMax },
      stop: config.stop,
      disk: { dir: dataDir, reserveBytes: config.diskReserveBytes },
      connections: config.connections,
      tracing,
      publicBaseUrl,
      documentServer: Option.getOrUndefined(config.publicBaseUrl),
      git: { kind: "disk", root: join(dataDir, "git"), timeoutMillis: config.gitHosts.timeoutMillis, phases: config.gitHosts.phases, ...config.git },
      gitSlots: config.gitHosts.slots,
      pods: { command: LocalProcessProvider.DEFAULT_COMMAND }
    }).pipe(StartupMemory.afterStart)
  })
)

/** An error's message and those of its causes, in one line (a PGlite failure's message is the useful part of it). */
const messagesOf = (u: unknown, depth = 0): string => {
  const message = Predicate.hasProperty(u, "message") && typeof u.message === "string" && u.message !== "" ? u.message : String(u)
  const cause = Predicate.hasProperty(u, "cause") ? u.cause : undefined
  return cause === undefined || depth >= 5 ? message : `${message}: ${messagesOf(cause, depth + 1)}`
}

/**
 * A start that failed says why in its line's message (the runtime's own report of it has an empty one: main.ts turns
 * it off for this), and says so when the disk under DATA_DIR is full or below its reserve.
 */
export const reportStartFailure = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    if (Cause.isInterruptedOnly(cause)) return
    const config = yield* Effect.option(AppConfig)
    const dataDir = resolve(Option.match(config, { onNone: () => "./data", onSome: (c) => c.dataDir }))
    const reserve = Option.match(config, { onNone: () => 0, onSome: (c) => c.diskReserveBytes })
    const free = Option.orElse(yield* freeBytesUnder(dataDir), () => Option.none<number>())
    const known = Option.isSome(free) ? free : yield* freeBytesUnder(dirname(dataDir))
    const short = causeIsDiskFull(cause) || Option.exists(known, (bytes) => bytes < reserve)
    const space = Option.match(known, { onNone: () => "", onSome: (bytes) => ` (${mebibytes(bytes)} free under DATA_DIR ${dataDir}, reserve ${mebibytes(reserve)})` })
    yield* Effect.logError(
      `${short ? `the service cannot start: not enough free disk space${space}` : "the service failed to start"}: ${messagesOf(Cause.squash(cause))}`,
      cause
    )
  })
