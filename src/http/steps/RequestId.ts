import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, FiberRef, Option } from "effect"
import { CurrentRequest, newRequestId } from "../../common/RequestContext.js"

/**
 * A new request id, in the request context (anonymous until a step identifies the credential) and in the X-Request-Id
 * of every answer. Set in the request's own fiber, which ends with the request: nothing to restore afterwards.
 */
export const assignRequestId = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.suspend(() => {
    const id = newRequestId()
    return Effect.zipRight(
      FiberRef.set(CurrentRequest, { id, identity: Either.right(Option.none()), windows: [] }),
      Effect.map(app, (response) => HttpServerResponse.setHeader(response, "x-request-id", id))
    )
  })
