import type { Step } from "./Step.js"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Either, FiberRef, Option } from "effect"
import { isAdmin, type Principal } from "../../auth/Principal.js"
import { CurrentRequest, type RequestContext } from "../../common/RequestContext.js"
import { withConnectionRetry } from "../../db/ConnectionLoss.js"
import type { Labs } from "../../labs/Labs.js"
import { bindingWindow, type Limits, PLAN_LIMITS, type RateDecision, type RateLimits } from "../../ratelimit/RateLimits.js"
import { errorResponse } from "./ErrorEnvelope.js"

/** Counts the request in its account's windows: the decision, for the window that binds. */
export type RequestCounter = (request: HttpServerRequest.HttpServerRequest, context: RequestContext) => Effect.Effect<RateDecision, unknown>

const addressOf = (request: HttpServerRequest.HttpServerRequest) => Option.getOrElse(request.remoteAddress, () => "unknown")

/** A credential's requests count against its plan's limits (the operator's against its own); no credential, its address's. */
export const perCredential = (labs: Labs, rateLimits: RateLimits, adminLimits: Limits): RequestCounter => {
  const limitsOf = (principal: Principal): Effect.Effect<Limits> =>
    isAdmin(principal) ? Effect.succeed(adminLimits) : Effect.map(labs.planOf(principal), (plan) => PLAN_LIMITS[plan])
  return (request, { identity }) => {
    const principal = Either.isRight(identity) ? identity.right : Option.none<Principal>()
    if (Option.isNone(principal)) return rateLimits.consume(`ip:${addressOf(request)}`, PLAN_LIMITS.free)
    return Effect.flatMap(withConnectionRetry(limitsOf(principal.value)), (limits) => rateLimits.consume(principal.value.id, limits))
  }
}

/** Requests that carry no credential by design (webhook deliveries) count per address, in a bucket of their own. */
export const perSender =
  (rateLimits: RateLimits, bucket: string, limits: Limits): RequestCounter =>
  (request) =>
    rateLimits.consume(`${bucket}:${addressOf(request)}`, limits)

/** The binding rate-limit window, as every answer past this step states it. */
const windowHeaders = (decision: RateDecision): Record<string, string> => {
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(decision.limit),
    "x-ratelimit-remaining": String(Math.max(0, decision.remaining)),
    "x-ratelimit-reset": String(decision.reset)
  }
  if (!decision.allowed) headers["retry-after"] = String(decision.retryAfter)
  return headers
}

/**
 * Count the request; over its limit, 429. Every answer states the window that binds: the request's own, or one the
 * handlers counted it in (a lab's budget, a lab's forced syncs, a webhook sender's failures) that is closer to its limit.
 */
export const limitRate =
  (count: RequestCounter): Step =>
  (app) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const context = fiber.getFiberRef(CurrentRequest)
      return Effect.flatMap(count(request, context), (decision) => {
        if (!decision.allowed) {
          const refused = errorResponse("RateLimited", `rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`)
          return Effect.succeed(HttpServerResponse.setHeaders(refused, windowHeaders(decision)))
        }
        // what the handlers counted the request in is read once they are done: the request's own fiber holds it
        return Effect.flatMap(app, (response) =>
          Effect.map(FiberRef.get(CurrentRequest), ({ windows }) =>
            HttpServerResponse.setHeaders(response, windowHeaders(windows.length === 0 ? decision : bindingWindow(decision, windows.map((w) => w.decision))))
          )
        )
      })
    })
