import type * as HttpApp from "@effect/platform/HttpApp"

/**
 * A step of the pipeline (src/http/Pipeline.ts): an HttpMiddleware in @effect/platform's sense, app in, app out, over
 * apps that may fail with anything. A step that answers every failure gives an app that fails with nothing.
 */
export type Step<E = unknown> = (app: HttpApp.Default<unknown>) => HttpApp.Default<E>

/**
 * Steps listed in the order a request meets them: the first wraps all the others (what it fails with, the chain fails
 * with), the last wraps the app.
 */
export const inOrder =
  <E>(first: Step<E>, ...rest: ReadonlyArray<Step>): Step<E> =>
  (app) =>
    first(rest.reduceRight((inner, step) => step(inner), app))
