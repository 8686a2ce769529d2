import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect, FiberRef } from "effect"
import { CurrentRequest } from "../../common/RequestContext.js"
import { observed } from "../RequestLog.js"
import type { RouteTable } from "../RouteTable.js"
import type { Step } from "./Step.js"

/** Routes (`METHOD /template`, as the route table names them) that take steps of their own instead of the default ones. */
export interface RouteGroup {
  readonly routes: ReadonlyArray<string>
  readonly steps: Step<never>
  /** Left out of the request log and its metrics (the probes an orchestrator polls); logged when absent. */
  readonly unlogged?: true
}

/** The routes of an HttpApi group, named as the route table names them. */
export const routesOf = (group: {
  readonly endpoints: Readonly<Record<string, { readonly method: string; readonly path: string }>>
}): ReadonlyArray<string> =>
  Object.values(group.endpoints).map((endpoint) => `${endpoint.method} ${endpoint.path}`)

/**
 * The request's span names its request id and route, when traces are on (the caller reads that from its fiber, without
 * an effect step): without a span, annotateCurrentSpan fails and ignores a NoSuchElementException, an Error (with its
 * stack) made on every request.
 */
const withSpanNames = <A, E, R>(requestId: string, route: string, effect: Effect.Effect<A, E, R>) =>
  Effect.zipRight(Effect.annotateCurrentSpan({ "request.id": requestId, "http.route": route }), effect)

/**
 * Find the request's route (its path template: unknown paths are `unmatched`), run the steps of the group it belongs
 * to, else `otherwise`, and log the answer under the route. Each group's chain is built once, around the same app.
 */
export const byRouteGroup =
  (routes: RouteTable, groups: ReadonlyArray<RouteGroup>, otherwise: Step<never>): Step<never> =>
  (app) => {
    const chains = new Map<string, { readonly app: HttpApp.Default<never>; readonly logged: boolean }>()
    for (const group of groups) {
      const chain = { app: group.steps(app), logged: group.unlogged !== true }
      for (const route of group.routes) chains.set(route, chain)
    }
    const rest = otherwise(app)
    return Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>((fiber) => {
      const { method, url } = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const route = routes.templateOf(method, url)
      const chain = chains.get(`${method} ${route}`)
      if (chain !== undefined && !chain.logged) return chain.app
      const served = chain?.app ?? rest
      const requestId = fiber.getFiberRef(CurrentRequest).id
      // the request's span (when traces are exported) names the request id the answer and the log carry
      return observed({ requestId, method, route })(
        fiber.getFiberRef(FiberRef.currentTracerEnabled) ? withSpanNames(requestId, route, served) : served
      )
    })
  }
