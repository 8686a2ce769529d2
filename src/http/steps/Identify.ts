import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Step } from "./Step.js"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect, FiberRef } from "effect"
import type { Identity } from "../../auth/Identity.js"
import { CurrentRequest } from "../../common/RequestContext.js"
import { withConnectionRetry } from "../../db/ConnectionLoss.js"

/**
 * The Authorization header resolved once, into the request context: a principal, no credential, or a refused one
 * (the Authentication middleware answers 401 on the routes that need one; a refused credential is never anonymous).
 */
export const identify =
  (identity: Identity): Step =>
  (app) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      return Effect.flatMap(withConnectionRetry(identity.identify(request.headers["authorization"])), (identified) =>
        Effect.zipRight(FiberRef.set(CurrentRequest, { ...fiber.getFiberRef(CurrentRequest), identity: identified }), app)
      )
    })
