import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Context, Effect, Either, FiberRef, Option } from "effect"
import { Identity } from "../auth/Identity.js"
import { isAdmin, type Principal } from "../auth/Principal.js"
import { Labs } from "../labs/Labs.js"
import { AdminLimits, bindingWindow, type Limits, PLAN_LIMITS, type RateDecision, RateLimits } from "../ratelimit/RateLimits.js"
import { DatabaseUnavailable, withConnectionRetry } from "../db/ConnectionLoss.js"
import { recordsQuotaMessage } from "../quotas/RecordsQuota.js"
import { restoreGateMessage } from "../db/RestoreGate.js"
import { causeIsDiskFull } from "../db/DiskFull.js"
import { DiskSpace, type DiskSpaceService } from "../status/DiskSpace.js"
import { type ErrorTag, errorBody, isApiError } from "./Errors.js"
import { type CountedWindows, CurrentRequest, type Identified, newRequestId } from "../common/RequestContext.js"
import type { RouteTable } from "./RouteTable.js"
import { bodyLimitFor, bodyTooLarge, MAX_BODY_BYTES, WEBHOOK_PATH } from "./BodyLimit.js"
import { makeInputCheck } from "./InputCheck.js"
import { observed } from "./RequestLog.js"
import { idempotent } from "./Idempotency.js"
import { IdempotencyKeys, type IdempotencyKeysService } from "../idempotency/IdempotencyKeys.js"
import { shownIssue } from "../common/TextHygiene.js"

/**
 * Repeated slashes in the path mean one (`/api//v1/tasks`); the query is left as sent (`labId=a//b` is not `a/b`). The
 * router is told not to collapse them itself (layers/App.ts): it would collapse them in the query too.
 */
const collapseSlashes = (url: string): string => {
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
  return path.includes("//") ? `${path.replace(/\/{2,}/g, "/")}${mark === -1 ? "" : url.slice(mark)}` : url
}

/** `/v1/...` is an alias of `/api/v1/...` (spec 9). */
const canonicalUrl = (raw: string): string => {
  const url = collapseSlashes(raw)
  return url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?") ? `/api${url}` : url
}

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined

const WEBHOOKS = WEBHOOK_PATH

/** Bodies are JSON (spec 4.1); a missing Content-Type is read as JSON. Webhooks may also be form-encoded (GitHub's default). */
const isAcceptedBody = (request: HttpServerRequest.HttpServerRequest) => {
  const type = request.headers["content-type"]
  if (type === undefined || /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) return true
  return request.url.startsWith(WEBHOOKS) && type.startsWith("application/x-www-form-urlencoded")
}

const errorResponse = (tag: ErrorTag, message: string, headers: Record<string, string> = {}) => {
  const body = errorBody(tag, message)
  return HttpServerResponse.unsafeJson(body, { status: body.error.status, headers })
}

/** Seconds a client is told to wait after the database connection was lost (the pool reconnects in milliseconds). */
const DATABASE_RETRY_AFTER_SECONDS = 1

const databaseUnavailable = (error: DatabaseUnavailable) => {
  // a pool that is busy is not a lost connection: the client is told which, and what it means for its change
  const what = error.busy === true ? "the database is busy (every connection stayed in use)" : "the database connection was lost"
  return errorResponse(
    "ServiceUnavailable",
    error.mayHaveLanded
      ? `${what} while the change was being saved: it may or may not have been applied; check before sending it again`
      : `${what}; nothing was changed: retry`,
    { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) }
  )
}

/** A request that failed on a full disk (53100, ENOSPC): the disk's to fix, not the client's request. */
const diskFull = errorResponse(
  "InsufficientStorage",
  "the disk is full: the request could not be completed; send it again once space is freed (GET /readyz says when)"
)

/** Methods that change something: refused while the disk is below its reserve (reads go on). */
const WRITES: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** MCP messages: the edge refuses its write tools itself, as tool results, and serves its reads (src/mcp/McpServer.ts). */
const isMcp = (url: string) => url === "/mcp" || url.startsWith("/mcp?")

/** Revoking a key: a stolen one must be stoppable while the disk is low (the revocation is one small update). */
const isKeyRevocation = (method: string, url: string) => method === "DELETE" && url.split("?", 1)[0] === "/api/v1/auth/keys"

/**
 * While the disk is below its reserve, a write with a valid credential (or none) is refused before it is routed: 507
 * with the reason. A bad credential still gets its 401. Exempt: webhook deliveries (they only note that a pull is
 * wanted, a small row, and git hosts do not redeliver a refused one or disable the hook; the pull itself waits for
 * space) and key revocations.
 */
const storageRefusal = (disk: DiskSpaceService, method: string, url: string, identified: Identified): Option.Option<string> =>
  WRITES.has(method) && Either.isRight(identified) && !url.startsWith(WEBHOOKS) && !isKeyRevocation(method, url) && !isMcp(url)
    ? disk.writesRefused()
    : Option.none()

const tooLarge = (limit: number) => errorResponse("PayloadTooLarge", `the request body exceeds ${limit} bytes`)

const decodeMessage = (error: HttpApiError.HttpApiDecodeError): string => {
  // an optional field reports its own failure and then "Expected undefined": keep the first
  const relevant = error.issues.filter((issue) => !issue.message.startsWith("Expected undefined"))
  const parts = relevant.map((issue) => {
    const field = issue.path.map(String).join(".")
    if (issue.message === "is missing") return `${field} is required`
    if (issue._tag === "Unexpected" && field) return `${field} is not a known field`
    const message = shownIssue(issue.message)
    return field ? `${field}: ${message}` : message
  })
  return parts.length > 0 ? parts.join("; ") : error.message
}

/**
 * Every failure becomes the error envelope: declared errors keep their code,
 * request decoding is 422, unknown routes 404, wrong methods 405, and defects
 * 500 with nothing internal in the body (the cause is logged with the request id).
 */
const toErrorResponse = (routes: RouteTable, requestId: string, disk?: DiskSpaceService) => (cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    if (Cause.isInterruptedOnly(cause)) return yield* Effect.interrupt
    const failure = Cause.squash(cause)
    if (isApiError(failure)) return errorResponse(failure._tag, failure.message)
    if (failure instanceof DatabaseUnavailable) return databaseUnavailable(failure)
    if (disk !== undefined && causeIsDiskFull(cause)) return yield* Effect.as(disk.reportFull, diskFull)
    const overRecords = recordsQuotaMessage(failure)
    if (overRecords !== undefined) return errorResponse("QuotaExceeded", overRecords)
    const restoring = restoreGateMessage(failure)
    if (restoring !== undefined) return errorResponse("Conflict", restoring)
    if (failure instanceof HttpApiError.HttpApiDecodeError) return errorResponse("ValidationError", decodeMessage(failure))
    if (HttpServerError.isServerError(failure)) {
      if (failure._tag === "RouteNotFound") {
        const request = failure.request
        const allowed = routes.methodsFor(request.url)
        return allowed.length > 0
          ? errorResponse("MethodNotAllowed", `${request.method} is not allowed here; use ${allowed.join(", ")}`, {
              allow: allowed.join(", ")
            })
          : errorResponse("NotFound", `no route for ${request.method} ${request.url.split("?")[0]}`)
      }
      if (failure._tag === "RequestError") {
        if (failure.reason === "Decode") return errorResponse("ValidationError", "the request body is not valid JSON")
      }
    }
    yield* Effect.logError("request failed with a defect", cause, { request_id: requestId })
    return errorResponse("ServerError", `internal error; quote ${requestId} when reporting it`)
  })

/** The headers every answer carries: the request id and the binding rate-limit window. */
const commonHeaders = (requestId: string, decision: RateDecision): Record<string, string> => {
  const headers: Record<string, string> = {
    "x-request-id": requestId,
    "x-ratelimit-limit": String(decision.limit),
    "x-ratelimit-remaining": String(Math.max(0, decision.remaining)),
    "x-ratelimit-reset": String(decision.reset)
  }
  if (!decision.allowed) headers["retry-after"] = String(decision.retryAfter)
  return headers
}

/** Seconds a 503 `service_unavailable` asks the client to wait (a stop or a restart is over by then). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5

/** Every 503 says when to retry, unless its handler said so already. */
const unavailableHeaders = (response: HttpServerResponse.HttpServerResponse): Record<string, string> =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) }
    : {}

/**
 * The request's span names its request id and route, when traces are on (the caller reads that from its fiber, without
 * an effect step): without a span, annotateCurrentSpan fails and ignores a NoSuchElementException, an Error (with its
 * stack) made on every request.
 */
const withSpanNames = <A, E, R>(requestId: string, route: string, effect: Effect.Effect<A, E, R>) =>
  Effect.zipRight(Effect.annotateCurrentSpan({ "request.id": requestId, "http.route": route }), effect)

/** An orchestrator polls these: they skip identification and the rate limits (src/status/Api.ts). */
const PROBES: ReadonlySet<string> = new Set(["/healthz", "/readyz"])

const probe = ({ app, routes, requestId }: Incoming) =>
  Effect.matchCauseEffect(
    Effect.locally(app, CurrentRequest, { id: requestId, identity: Either.right(Option.none()), counted: { labs: new Set<string>(), decisions: [] } }),
    { onFailure: toErrorResponse(routes, requestId), onSuccess: Effect.succeed }
  ).pipe(
    Effect.map((response) => HttpServerResponse.setHeader(response, "x-request-id", requestId))
  )

const anonymous = (webhook: boolean) => (webhook ? PLAN_LIMITS.team : PLAN_LIMITS.free)

/** A request as the middleware received it, before it is identified and counted. */
interface Incoming {
  readonly app: HttpApp.Default
  readonly routes: RouteTable
  readonly inputCheck: ReturnType<typeof makeInputCheck>
  readonly requestId: string
  /** as the server gave it, and with its URL made canonical */
  readonly original: HttpServerRequest.HttpServerRequest
  readonly request: HttpServerRequest.HttpServerRequest
  readonly url: string
  /** git hosts deliver webhooks unauthenticated (the signature is checked later): a generous bucket of their own */
  readonly webhook: boolean
  readonly disk: DiskSpaceService
  readonly keys: IdempotencyKeysService
}

/** A request once identified and counted: refused over its rate limit or for its body, else routed; headers added. */
const serve = (incoming: Incoming, identified: Identified, decision: RateDecision) => {
  const { app, routes, inputCheck, requestId, original, request, url, webhook, disk } = incoming
  // windows the handlers count (a lab's budget, …): the headers describe whichever binds
  const counted: CountedWindows = { labs: new Set(), decisions: [] }
  const answer = (response: HttpServerResponse.HttpServerResponse) =>
    Effect.succeed(
      HttpServerResponse.setHeaders(response, {
        ...unavailableHeaders(response),
        ...commonHeaders(requestId, counted.decisions.length === 0 ? decision : bindingWindow(decision, counted.decisions))
      })
    )
  if (!decision.allowed) {
    return answer(
      errorResponse("RateLimited", `rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`)
    )
  }
  const refused = storageRefusal(disk, request.method, url, identified)
  if (Option.isSome(refused)) return answer(errorResponse("InsufficientStorage", refused.value))
  const bodyLimit = bodyLimitFor(url)
  // a webhook's own limit is the receiver's to apply (it counts the failure against the sender)
  if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return answer(tooLarge(MAX_BODY_BYTES))
  if (hasBody(request) && !isAcceptedBody(request)) {
    return answer(errorResponse("UnsupportedMediaType", "request bodies are JSON: send Content-Type: application/json"))
  }
  // hostile strings and shapes are refused before routing; the check reads the body through the request the route gets
  const checked = Effect.zipRight(inputCheck, app)
  // a request that lost its database connection before anything of it was saved runs again; a webhook's
  // body is read as a stream, once: it is answered 503 and the git host delivers it again
  const routed = withConnectionRetry(
    Effect.locally(
      request === original ? checked : Effect.provideService(checked, HttpServerRequest.HttpServerRequest, request),
      CurrentRequest,
      { id: requestId, identity: identified, counted }
    ),
    { retry: !webhook }
  )
  // a body cut at the limit fails to decode; whatever the handler said, the answer is 413
  const finish = (response: HttpServerResponse.HttpServerResponse) => answer(bodyTooLarge(original) ? tooLarge(bodyLimit) : response)
  const enveloped = Effect.catchAllCause(routed, toErrorResponse(routes, requestId, disk))
  return Effect.flatMap(idempotent(incoming.keys, request, identified, enveloped), finish)
}

/**
 * The HttpApi-level middleware every request passes: request id, alias,
 * authentication (resolved once into the request context, read by the
 * Authentication middleware), rate limits with their headers, body size, and
 * the error envelope. Every request runs it: it is written as a few direct
 * steps, and the common cases (a cached credential, the memory rate-limit
 * store) answer without waiting.
 */
export const makeGlobalMiddleware = (routes: RouteTable) =>
  Effect.gen(function* () {
    const identity = yield* Identity
    const labs = yield* Labs
    const rateLimits = yield* RateLimits
    const adminLimits = yield* AdminLimits
    const disk = yield* DiskSpace
    const keys = yield* IdempotencyKeys
    const inputCheck = makeInputCheck(routes)

    const limitsOf = (principal: Principal): Effect.Effect<Limits> =>
      isAdmin(principal) ? Effect.succeed(adminLimits) : Effect.map(labs.planOf(principal), (plan) => PLAN_LIMITS[plan])

    /** Identified, counted, then served; what fails before routing (the database lost, a defect) answered here. */
    const identifyAndServe = (incoming: Incoming) => {
      const { request, webhook, requestId } = incoming
      return Effect.flatMap(withConnectionRetry(identity.identify(request.headers["authorization"])), (identified) => {
        const principal = Either.isRight(identified) ? identified.right : Option.none<Principal>()
        if (Option.isNone(principal)) {
          const address = Option.getOrElse(request.remoteAddress, () => "unknown")
          const account = webhook ? `webhook:${address}` : `ip:${address}`
          return Effect.flatMap(rateLimits.consume(account, anonymous(webhook)), (decision) => serve(incoming, identified, decision))
        }
        return Effect.flatMap(withConnectionRetry(limitsOf(principal.value)), (limits) =>
          Effect.flatMap(rateLimits.consume(principal.value.id, limits), (decision) => serve(incoming, identified, decision))
        )
      }).pipe(
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
          const failure = Cause.squash(cause)
          if (failure instanceof DatabaseUnavailable) return Effect.succeed(databaseUnavailable(failure))
          if (causeIsDiskFull(cause)) return Effect.as(disk.reportFull, HttpServerResponse.setHeader(diskFull, "x-request-id", requestId))
          return Effect.as(
            Effect.logError("request failed before routing", cause, { request_id: requestId }),
            errorResponse("ServerError", `internal error; quote ${requestId} when reporting it`, { "x-request-id": requestId })
          )
        })
      )
    }

    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>((fiber) => {
        const requestId = newRequestId()
        const original = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
        const url = canonicalUrl(original.url)
        const request = url === original.url ? original : original.modify({ url })
        const webhook = url.startsWith(WEBHOOKS)
        const incoming: Incoming = { app, routes, inputCheck, requestId, original, request, url, webhook, disk, keys }
        if (PROBES.has(url)) return probe(incoming)
        const route = routes.templateOf(request.method, url)
        // the request's span (when traces are exported) names the request id the answer and the log carry
        const served = identifyAndServe(incoming)
        return observed({ requestId, method: request.method, route })(
          fiber.getFiberRef(FiberRef.currentTracerEnabled) ? withSpanNames(requestId, route, served) : served
        )
      })
  })
