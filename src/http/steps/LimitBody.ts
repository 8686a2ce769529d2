import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Step } from "./Step.js"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"
import { bodyCutAt, capBody } from "../BodyLimit.js"
import { errorResponse } from "./ErrorEnvelope.js"

const tooLarge = (limit: number) => errorResponse("PayloadTooLarge", `the request body exceeds ${limit} bytes`)

/**
 * A body declared longer than `bytes` is refused unread (413). A body is read up to `readAtMost` bytes (`bytes` unless
 * told) and the rest dropped as it arrives (src/http/BodyLimit.ts); a body cut there is answered 413, whatever the
 * route said of the bytes it got.
 */
export const limitBody =
  (bytes: number, readAtMost: number = bytes): Step =>
  (app) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      if (Number(request.headers["content-length"] ?? 0) > bytes) return Effect.succeed(tooLarge(bytes))
      capBody(request, readAtMost)
      return Effect.map(app, (response) => {
        const cut = bodyCutAt(request)
        return cut === undefined ? response : tooLarge(cut)
      })
    })
