import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, FiberRef, LogLevel, Metric, type MetricHook, MetricKey, MetricLabel } from "effect"
import { httpRequestSecondsKey, httpRequestsKey, rateLimitRefusals } from "../observability/Metrics.js"

type Labels = ReadonlyArray<readonly [string, string]>
const labelled = (labels: Labels) => labels.map(([key, value]) => MetricLabel.make(key, value))

// a request's series, their hooks taken once per method, route and status (bounded by the route table)
const counters = new Map<string, MetricHook.MetricHook.Counter<number>>()
const histograms = new Map<string, MetricHook.MetricHook.Histogram>()

const counterOf = (method: string, route: string, status: number) => {
  const key = `${method} ${route} ${status}`
  let hook = counters.get(key)
  if (hook === undefined) {
    const labels: Labels = [["method", method], ["route", route], ["status", String(status)]]
    hook = Metric.globalMetricRegistry.getCounter(MetricKey.taggedWithLabels(httpRequestsKey, labelled(labels)))
    counters.set(key, hook)
  }
  return hook
}

const histogramOf = (method: string, route: string) => {
  const key = `${method} ${route}`
  let hook = histograms.get(key)
  if (hook === undefined) {
    const labels: Labels = [["method", method], ["route", route]]
    hook = Metric.globalMetricRegistry.getHistogram(MetricKey.taggedWithLabels(httpRequestSecondsKey, labelled(labels)))
    histograms.set(key, hook)
  }
  return hook
}

export interface Observed {
  readonly requestId: string
  readonly method: string
  /** the route's path template, never the URL (which may carry ids and query values) */
  readonly route: string
}

/**
 * One log line and the metrics of each answered request: method, route, status, duration and request id; never a
 * header, a query value or a body.
 */
export const observed =
  ({ requestId, method, route }: Observed) =>
  <E, R>(handled: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
    const started = performance.now()
    return Effect.tap(handled, (response) => {
      const millis = performance.now() - started
      const status = response.status
      counterOf(method, route, status).update(1)
      histogramOf(method, route).update(millis / 1000)
      const line = Effect.withFiberRuntime<void>((fiber) =>
        // the line's fields are gathered only when it is written
        LogLevel.greaterThanEqual(LogLevel.Info, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))
          ? // the fields are written as the line's annotations (layers/Logging.ts)
            Effect.logInfo("request", { request_id: requestId, method, route, status, duration_ms: Math.round(millis * 10) / 10 })
          : Effect.void
      )
      return status === 429 ? Effect.zipRight(Metric.increment(rateLimitRefusals), line) : line
    })
  }
