import { Effect, Layer, Option } from "effect"
import { chmod, mkdir, stat } from "node:fs/promises"
import { join, resolve } from "node:path"
import * as App from "./App.js"
import * as Bootstrap from "./Bootstrap.js"
import { AppConfig } from "./Config.js"
import * as StartupMemory from "./StartupMemory.js"
import * as Tracing from "./Tracing.js"
import * as LocalProcessProvider from "./pods/LocalProcessProvider.js"

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
      stop: config.stop,
      connections: config.connections,
      tracing,
      publicBaseUrl,
      git: { kind: "disk", root: join(dataDir, "git"), timeoutMillis: 60_000, ...config.git },
      pods: { command: LocalProcessProvider.DEFAULT_COMMAND }
    }).pipe(StartupMemory.afterStart)
  })
)
