import type { Step } from "./Step.js"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

/** Seconds a 503 `service_unavailable` asks the client to wait (a stop or a restart is over by then). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5

/** Every 503 says when to retry, unless its handler said so already. */
export const retryAfterOn503: Step = (app) =>
  Effect.map(app, (response) =>
    response.status === 503 && response.headers["retry-after"] === undefined
      ? HttpServerResponse.setHeader(response, "retry-after", String(UNAVAILABLE_RETRY_AFTER_SECONDS))
      : response
  )
