import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Path from "@effect/platform/Path"
import { Context, Effect, Layer, Option, type Redacted, Scope } from "effect"
import { createServer } from "node:http"
import { JwtVerifier, type JwtSettings } from "../src/auth/JwtVerifier.js"
import { AdminKey } from "../src/auth/Identity.js"
import { UsersRepo } from "../src/auth/UsersRepo.js"
import { SecretBox } from "../src/common/SecretBox.js"
import { LimitedIncomingMessage } from "../src/http/BodyLimit.js"
import { DocumentServer } from "../src/http/Docs.js"
import { ApiLive } from "../src/HttpApp.js"
import { AdminLimits, type Limits } from "../src/ratelimit/RateLimits.js"
import type { Plan } from "../src/common/Schemas.js"
import { DEFAULT_QUOTAS, type PlanQuotas, QuotaLimits } from "../src/quotas/PlanQuotas.js"
import { warmUpFileWrites } from "../src/files/WarmUp.js"
import * as JoseJwks from "./auth/JoseJwks.js"
import * as Database from "./Database.js"
import * as GitDisk from "./git/GitDisk.js"
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, serverOptions } from "./ConnectionLimits.js"
import * as NodeServer from "./NodeServer.js"
import * as Tracing from "./Tracing.js"
import type { Git } from "../src/sync/Git.js"
import { AuthorizationServers } from "../src/mcp/Http.js"
import { PublicBaseUrl } from "../src/sync/Sync.js"
import { DEFAULT_JOB_SLOTS, JobSlots, type JobSlotSettings } from "../src/sync/JobSlots.js"
import { Readiness } from "../src/status/Readiness.js"
import * as DiskSpace from "../src/status/DiskSpace.js"
import * as DiskSpaceWatch from "./DiskSpaceWatch.js"
import { DEFAULT_STOP, drainOnStop, type StopSettings } from "./Stop.js"
import { DEFAULT_WEBHOOK_FAILURES_PER_MINUTE, WebhookFailureLimit } from "../src/sync/Webhooks.js"
import * as RateLimitStore from "./RateLimitStore.js"
import { notingWrites } from "../src/db/ConnectionLoss.js"
import * as LocalProcessProvider from "./pods/LocalProcessProvider.js"
import * as IdempotencyKeys from "../src/idempotency/IdempotencyKeys.js"
import { DEFAULT_IDEMPOTENCY, type IdempotencySettings } from "../src/idempotency/IdempotencyKeys.js"

/** Everything an instance needs, resolved: the compositions below take no environment variables. */
export interface AppSettings {
  readonly port: number
  readonly host: string
  readonly database: Database.DatabaseSettings
  readonly redisUrl: Option.Option<URL>
  /** How often a Redis known to be away is tried again (RATE_LIMIT_REDIS_RETRY_MS); 2 s when absent. */
  readonly redisRetryMillis?: number
  readonly adminKey: Redacted.Redacted<string>
  readonly masterKey: Redacted.Redacted<string>
  readonly jwt: Option.Option<JwtSettings>
  readonly adminLimits: Limits
  /** How many labs' git jobs and host probes run at once (GIT_*_SLOTS); DEFAULT_JOB_SLOTS when absent. */
  readonly gitSlots?: JobSlotSettings
  /** Per-lab quotas by plan (QUOTA_* variables); DEFAULT_QUOTAS when absent. */
  readonly quotas?: Readonly<Record<Plan, PlanQuotas>>
  /** Failed webhook deliveries an address may make per minute before 429 (default 10). */
  readonly webhookFailuresPerMinute?: number
  /** Idempotency keys kept per credential and for how long (IDEMPOTENCY_KEYS_MAX); DEFAULT_IDEMPOTENCY when absent. */
  readonly idempotency?: IdempotencySettings
  readonly publicBaseUrl: URL
  /** PUBLIC_BASE_URL when it was configured: the OpenAPI document names it as its server (else the relative "/"). */
  readonly documentServer?: URL
  /**
   * Where labs' repositories live: on disk (deployments), in memory (tests), or any Git layer (an embedder's, or a
   * test's wrapper that injects faults).
   */
  readonly git:
    | ({ readonly kind: "disk" } & GitDisk.GitDiskOptions)
    | { readonly kind: "memory" }
    | { readonly kind: "layer"; readonly layer: Layer.Layer<Git> }
  /**
   * Pods run as local processes of this command (program and arguments);
   * `stopGraceMillis` is how long a stop waits after SIGTERM before SIGKILL (default 5 s).
   */
  readonly pods: { readonly command: ReadonlyArray<string>; readonly stopGraceMillis?: number }
  /** Request deadlines and connection caps (HTTP_* variables); DEFAULT_CONNECTION_LIMITS when absent. */
  readonly connections?: ConnectionLimits
  /** How a stop goes (README "Operating"); DEFAULT_STOP when absent. */
  readonly stop?: StopSettings
  /** Where spans and metrics go over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT); none when absent. */
  readonly tracing?: Option.Option<Tracing.Exporter>
  /**
   * The disk watched for free space (DATA_DIR against DISK_RESERVE_BYTES), or a layer of a test's own; when absent
   * nothing is watched and only disk-full errors refuse writes (src/status/DiskSpace.ts).
   */
  readonly disk?: { readonly dir: string; readonly reserveBytes: number } | { readonly layer: Layer.Layer<DiskSpace.DiskSpace> }
}

/** The in-memory git (tests) is loaded only when asked for: a deployment does not load it and memfs. */
const memoryGit = Layer.unwrapEffect(Effect.promise(() => import("./git/GitMemory.js")).pipe(Effect.map((memory) => memory.layer)))

const diskLayer = (disk: AppSettings["disk"]): Layer.Layer<DiskSpace.DiskSpace> =>
  disk === undefined ? DiskSpace.unwatched : "layer" in disk ? disk.layer : DiskSpaceWatch.layer(disk.dir, disk.reserveBytes)

const gitLayer = (git: AppSettings["git"]): Layer.Layer<Git> =>
  git.kind === "disk" ? GitDisk.layer(git) : git.kind === "memory" ? memoryGit : git.layer

/** The adapters and settings the API runs on. */
export const environment = (settings: AppSettings) => {
  const migrated = Database.layer(settings.database)
  // a deployment's embedded database takes its first-use costs at start (a test's in-memory one need not)
  const database =
    settings.database.kind === "pglite" && settings.database.dataDir !== undefined
      ? Layer.effectDiscard(warmUpFileWrites).pipe(Layer.provideMerge(migrated))
      : migrated
  const jwt = Option.match(settings.jwt, {
    onNone: () => JwtVerifier.disabled,
    onSome: (jwt) => JwtVerifier.layer(jwt).pipe(Layer.provide([UsersRepo.Default, JoseJwks.layer(jwt.jwksUrl)]))
  })
  return Layer.mergeAll(
    jwt,
    gitLayer(settings.git),
    Layer.succeed(PublicBaseUrl, settings.publicBaseUrl),
    Layer.succeed(DocumentServer, Option.fromNullable(settings.documentServer)),
    Layer.succeed(AuthorizationServers, Option.match(settings.jwt, { onNone: () => [], onSome: (jwt) => [jwt.issuer] })),
    RateLimitStore.layer(settings.redisUrl, settings.redisRetryMillis),
    SecretBox.layer(settings.masterKey),
    Layer.succeed(AdminKey, settings.adminKey),
    Layer.succeed(AdminLimits, settings.adminLimits),
    Layer.succeed(QuotaLimits, settings.quotas ?? DEFAULT_QUOTAS),
    Readiness.Default,
    Layer.succeed(JobSlots, settings.gitSlots ?? DEFAULT_JOB_SLOTS),
    Layer.succeed(WebhookFailureLimit, settings.webhookFailuresPerMinute ?? DEFAULT_WEBHOOK_FAILURES_PER_MINUTE),
    IdempotencyKeys.layer(settings.idempotency ?? DEFAULT_IDEMPOTENCY),
    // where pods run; a cloud provider (see src/pods/PodProvider.ts) would be chosen here
    LocalProcessProvider.layer({ command: settings.pods.command, stopGraceMillis: settings.pods.stopGraceMillis })
  ).pipe(Layer.provideMerge(Layer.merge(database, diskLayer(settings.disk))))
}

/**
 * HttpApiBuilder.serve, with each request's context cut to what the app asks
 * for (HttpRouter's DefaultServices). The handlers keep the services they were
 * built with; a request's context is copied several times on its way through
 * the router and middleware, and should not carry every service of the instance.
 */
const serveApi = Layer.scopedDiscard(
  Effect.gen(function* () {
    // the global middleware collapses repeated slashes in the path; the router's own collapsing reaches into the query
    const app = yield* HttpRouter.withRouterConfig(HttpApiBuilder.httpApp, { ignoreDuplicateSlashes: false })
    const server = yield* HttpServer.HttpServer
    yield* Effect.mapInputContext(
      server.serve(app),
      (context: Context.Context<Scope.Scope | HttpRouter.HttpRouter.DefaultServices>) =>
        Context.pick(Scope.Scope, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path)(context)
    )
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))

/** The API served over node:http on the configured host and port. */
export const server = (settings: AppSettings) => {
  const stop = settings.stop ?? DEFAULT_STOP
  const limits = settings.connections ?? DEFAULT_CONNECTION_LIMITS
  return drainOnStop(stop.drainMillis).pipe(
    Layer.provideMerge(serveApi),
    Layer.provide(ApiLive),
    Layer.provideMerge(
      NodeServer.layer(
        () => createServer({ IncomingMessage: LimitedIncomingMessage, ...serverOptions(limits) }),
        { port: settings.port, host: settings.host },
        stop.requestsMillis,
        limits
      )
    ),
    // the database is open and migrated before the port opens: no request waits on start-up
    Layer.provideMerge(environment(settings)),
    // statements note writes for withConnectionRetry in every request's fiber without a FiberRef change of their own
    Layer.provide(Layer.merge(tracing(settings.tracing), notingWrites))
  )
}

/**
 * Spans exported over OTLP when an exporter is configured (layers/Tracing.ts). Without one, no spans at all: do not
 * pay for one on every request and statement, nor for the server's request span (annotating it parses every
 * request's URL and copies its headers, span or no span).
 */
const tracing = (exporter: Option.Option<Tracing.Exporter> | undefined) =>
  exporter !== undefined && Option.isSome(exporter)
    ? Tracing.layer(exporter.value)
    : Layer.merge(Layer.setTracerEnabled(false), Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true))
