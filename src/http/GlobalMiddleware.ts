import {
  type HttpApp,
  HttpApiError,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Either, Option } from "effect"
import { CurrentIdentity } from "../auth/Authentication.js"
import { Identity } from "../auth/Identity.js"
import { isAdmin } from "../auth/Principal.js"
import { Labs } from "../labs/Labs.js"
import { AdminLimits, PLAN_LIMITS, type RateDecision, RateLimits } from "../ratelimit/RateLimits.js"
import { type ErrorTag, errorBody, isApiError } from "./Errors.js"
import { CurrentRequestId, newRequestId } from "./RequestContext.js"
import type { RouteTable } from "./RouteTable.js"
import { bodyTooLarge, MAX_BODY_BYTES } from "./BodyLimit.js"


/** `/v1/...` is an alias of `/api/v1/...` (spec 9). */
const canonicalUrl = (url: string): string => (url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?") ? `/api${url}` : url)

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined

const WEBHOOKS = "/api/webhooks/"

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

const tooLarge = () => errorResponse("PayloadTooLarge", `the request body exceeds ${MAX_BODY_BYTES} bytes`)

const decodeMessage = (error: HttpApiError.HttpApiDecodeError): string => {
  // an optional field reports its own failure and then "Expected undefined": keep the first
  const relevant = error.issues.filter((issue) => !issue.message.startsWith("Expected undefined"))
  const parts = relevant.map((issue) => {
    const field = issue.path.map(String).join(".")
    if (issue.message === "is missing") return `${field} is required`
    if (issue._tag === "Unexpected" && field) return `${field} is not a known field`
    return field ? `${field}: ${issue.message}` : issue.message
  })
  return parts.length > 0 ? parts.join("; ") : error.message
}

/**
 * Every failure becomes the error envelope: declared errors keep their code,
 * request decoding is 422, unknown routes 404, wrong methods 405, and defects
 * 500 with nothing internal in the body (the cause is logged with the request id).
 */
const toErrorResponse = (routes: RouteTable, requestId: string) => (cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    if (Cause.isInterruptedOnly(cause)) return yield* Effect.interrupt
    const failure = Cause.squash(cause)
    if (isApiError(failure)) return errorResponse(failure._tag, failure.message)
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
    yield* Effect.logError("request failed with a defect", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
    return errorResponse("ServerError", `internal error; quote ${requestId} when reporting it`)
  })

const rateHeaders = (decision: RateDecision): Record<string, string> => ({
  "x-ratelimit-limit": String(decision.limit),
  "x-ratelimit-remaining": String(Math.max(0, decision.remaining)),
  "x-ratelimit-reset": String(decision.reset),
  ...(decision.allowed ? {} : { "retry-after": String(decision.retryAfter) })
})

/**
 * The HttpApi-level middleware every request passes: request id, alias,
 * authentication (resolved once, read by the Authentication middleware),
 * rate limits with their headers, body size, and the error envelope.
 */
export const makeGlobalMiddleware = (routes: RouteTable) =>
  Effect.gen(function* () {
    const identity = yield* Identity
    const labs = yield* Labs
    const rateLimits = yield* RateLimits
    const adminLimits = yield* AdminLimits

    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.gen(function* () {
        const requestId = newRequestId()
        const original = yield* HttpServerRequest.HttpServerRequest
        const request = original.modify({ url: canonicalUrl(original.url) })
        const auth = yield* Effect.either(identity.authenticate(request.headers["authorization"]))

        const principal = Either.getOrElse(auth, () => Option.none())
        const address = Option.getOrElse(request.remoteAddress, () => "unknown")
        // git hosts deliver webhooks unauthenticated (the signature is checked later): a generous bucket of their own
        const webhook = request.url.startsWith(WEBHOOKS)
        const account = Option.match(principal, {
          onNone: () => (webhook ? `webhook:${address}` : `ip:${address}`),
          onSome: (p) => p.id
        })
        const limits = yield* Option.match(principal, {
          onNone: () => Effect.succeed(webhook ? PLAN_LIMITS.team : PLAN_LIMITS.free),
          onSome: (p) => (isAdmin(p) ? Effect.succeed(adminLimits) : Effect.map(labs.planOf(p), (plan) => PLAN_LIMITS[plan]))
        })
        const decision = yield* rateLimits.consume(account, limits)

        const contentLength = Number(request.headers["content-length"] ?? 0)
        const response = !decision.allowed
          ? errorResponse("RateLimited", `rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`)
          : contentLength > MAX_BODY_BYTES
            ? tooLarge()
            : hasBody(request) && !isAcceptedBody(request)
              ? errorResponse("UnsupportedMediaType", "request bodies are JSON: send Content-Type: application/json")
              : yield* app.pipe(
                Effect.provideService(HttpServerRequest.HttpServerRequest, request),
                Effect.locally(CurrentIdentity, auth),
                Effect.locally(CurrentRequestId, requestId),
                Effect.catchAllCause(toErrorResponse(routes, requestId)),
                // a body cut at the limit fails to decode; whatever the handler said, the answer is 413
                Effect.map((response) => (bodyTooLarge(original) ? tooLarge() : response))
              )

        return HttpServerResponse.setHeaders(response, { "x-request-id": requestId, ...rateHeaders(decision) })
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.as(Effect.logError("request failed before routing", cause), errorResponse("ServerError", "internal error"))
        )
      )
  })
