import type * as HttpApp from "@effect/platform/HttpApp"
import { Effect } from "effect"
import { Identity } from "../auth/Identity.js"
import { Labs } from "../labs/Labs.js"
import { MCP_PATH } from "../mcp/Http.js"
import { AdminLimits, PLAN_LIMITS, RateLimits } from "../ratelimit/RateLimits.js"
import { DiskSpace } from "../status/DiskSpace.js"
import { WebhooksApi } from "../sync/Api.js"
import { MAX_BODY_BYTES, WEBHOOK_MAX_BODY_BYTES } from "./BodyLimit.js"
import type { RouteTable } from "./RouteTable.js"
import { canonicalUrl } from "./steps/CanonicalUrl.js"
import { checkInput, checkUrl } from "./steps/CheckInput.js"
import { refuseWritesWhileDiskLow } from "./steps/DiskRefusal.js"
import { answerErrors, answerFailuresBeforeRouting } from "./steps/ErrorEnvelope.js"
import { identify } from "./steps/Identify.js"
import { keepAnswers } from "./steps/Idempotency.js"
import { IdempotencyKeys } from "../idempotency/IdempotencyKeys.js"
import { inOrder } from "./steps/Step.js"
import { limitBody } from "./steps/LimitBody.js"
import { answerLostConnection, retryOnLostConnection } from "./steps/LostConnection.js"
import { acceptBodies, JSON_BODIES, JSON_OR_FORM_BODIES } from "./steps/MediaType.js"
import { limitRate, perCredential, perSender } from "./steps/RateLimit.js"
import { assignRequestId } from "./steps/RequestId.js"
import { retryAfterOn503 } from "./steps/RetryAfter.js"
import { byRouteGroup, routesOf } from "./steps/RouteGroups.js"

/**
 * The steps every request passes before its route, in the order it meets them (each step is one module of
 * src/http/steps/). The route's group decides the steps after the first few: webhook deliveries and MCP messages have
 * rules of their own, declared here with their routes rather than tested for inside the steps.
 */
export const makePipeline = (routes: RouteTable) =>
  Effect.gen(function* () {
    const identity = yield* Identity
    const rateLimits = yield* RateLimits
    const disk = yield* DiskSpace
    const keys = yield* IdempotencyKeys
    const perCredentialLimits = perCredential(yield* Labs, rateLimits, yield* AdminLimits)

    /** Every route of the API not in a group below. */
    const rest = inOrder(
      answerFailuresBeforeRouting(disk), // a lost database, a full disk, a defect while identifying or counting
      identify(identity), // the credential, resolved once into the request context
      limitRate(perCredentialLimits), // 429 past the limit; every answer states the binding window
      retryAfterOn503,
      refuseWritesWhileDiskLow(disk), // 507 while the disk is below its reserve
      limitBody(MAX_BODY_BYTES), // 413
      acceptBodies(JSON_BODIES), // 415
      keepAnswers(keys), // a write with an Idempotency-Key done once; its repeats answered again
      answerErrors(routes, disk), // whatever the route failed with, as the error envelope
      checkInput(routes), // 422: NUL, lone surrogates, deep JSON, in the URL and the body
      retryOnLostConnection
    )

    /**
     * Webhook deliveries (spec 6.1): no credential (the receiver checks the signature), a generous bucket per sender,
     * form bodies accepted, bodies read up to 1 MiB (the receiver answers the 413, counting it against the sender) and
     * checked by the receiver once verified. Not refused while the disk is low: a delivery only notes that a pull is
     * wanted (a small row), and git hosts do not redeliver a refused one; the pull itself waits for space.
     */
    const webhooks = inOrder(
      answerFailuresBeforeRouting(disk),
      limitRate(perSender(rateLimits, "webhook", PLAN_LIMITS.team)),
      retryAfterOn503,
      limitBody(MAX_BODY_BYTES, WEBHOOK_MAX_BODY_BYTES),
      acceptBodies(JSON_OR_FORM_BODIES),
      answerErrors(routes, disk),
      checkUrl(routes),
      answerLostConnection // the body is read as a stream, once: 503, and the git host delivers it again
    )

    /**
     * MCP messages (src/mcp/Http.ts): as REST, except that the MCP edge reads the body itself (answering in JSON-RPC)
     * and refuses its write tools while the disk is low as tool results, serving its reads.
     */
    const mcp = inOrder(
      answerFailuresBeforeRouting(disk),
      identify(identity),
      limitRate(perCredentialLimits),
      retryAfterOn503,
      limitBody(MAX_BODY_BYTES),
      acceptBodies(JSON_BODIES),
      keepAnswers(keys),
      answerErrors(routes, disk),
      checkUrl(routes),
      retryOnLostConnection
    )

    /** What an orchestrator polls (src/status/Api.ts): no credential, no rate limit, no log line. */
    const probes = answerErrors(routes)

    const groups = [
      { routes: ["GET /healthz", "GET /readyz"], steps: probes, unlogged: true as const },
      { routes: routesOf(WebhooksApi), steps: webhooks },
      { routes: [`POST ${MCP_PATH}`], steps: mcp }
    ]

    return (app: HttpApp.Default): HttpApp.Default =>
      canonicalUrl( // `/v1` alias, repeated slashes
        assignRequestId( // X-Request-Id on every answer
          byRouteGroup(routes, groups, rest)(app) // the route's group's steps, and the request log under its template
        )
      )
  })
