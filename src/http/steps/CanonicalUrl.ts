import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"

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
export const canonicalUrlOf = (raw: string): string => {
  const url = collapseSlashes(raw)
  return url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?") ? `/api${url}` : url
}

/**
 * Every step after this one, and the route, see the request under its canonical URL. The request is replaced only when
 * its URL changes (rarely): the body a step reads is cached on the request object the route is given.
 */
export const canonicalUrl = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const url = canonicalUrlOf(request.url)
    return url === request.url ? app : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url }))
  })
