import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Step } from "./Step.js"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"
import { errorResponse } from "./ErrorEnvelope.js"

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i

/** Bodies are JSON (spec 4.1); a missing Content-Type is read as JSON. */
export const JSON_BODIES = (type: string): boolean => JSON_TYPE.test(type)

/** JSON, or form-encoded as a git host may send a webhook (GitHub's default). */
export const JSON_OR_FORM_BODIES = (type: string): boolean => JSON_TYPE.test(type) || type.startsWith("application/x-www-form-urlencoded")

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined

/** A body of a type the group does not read is refused with 415. */
export const acceptBodies =
  (accepted: (type: string) => boolean): Step =>
  (app) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const type = request.headers["content-type"]
      return type === undefined || accepted(type) || !hasBody(request)
        ? app
        : Effect.succeed(errorResponse("UnsupportedMediaType", "request bodies are JSON: send Content-Type: application/json"))
    })
