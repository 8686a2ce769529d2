import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Metric } from "effect"
import { httpRequests, httpRequestSeconds, rateLimitRefusals } from "../observability/Metrics.js"

type Counter = Metric.Metric.Counter<number>
type Histogram = typeof httpRequestSeconds

// a request's series, made once per method, route and status (their number is bounded by the route table)
const counters = new Map<string, Counter>()
const histograms = new Map<string, Histogram>()

const counterOf = (method: string, route: string, status: number) => {
  const key = `${method} ${route} ${status}`
  let counter = counters.get(key)
  if (counter === undefined) {
    counter = httpRequests.pipe(Metric.tagged("method", method), Metric.tagged("route", route), Metric.tagged("status", String(status)))
    counters.set(key, counter)
  }
  return counter
}

const histogramOf = (method: string, route: string) => {
  const key = `${method} ${route}`
  let histogram = histograms.get(key)
  if (histogram === undefined) {
    histogram = httpRequestSeconds.pipe(Metric.tagged("method", method), Metric.tagged("route", route))
    histograms.set(key, histogram)
  }
  return histogram
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
      return Effect.zipRight(
        Effect.zipRight(
          Metric.increment(counterOf(method, route, status)),
          status === 429 ? Metric.increment(rateLimitRefusals) : Effect.void
        ),
        Effect.zipRight(
          Metric.update(histogramOf(method, route), millis / 1000),
          Effect.logInfo("request").pipe(
            Effect.annotateLogs({ request_id: requestId, method, route, status, duration_ms: Math.round(millis * 10) / 10 })
          )
        )
      )
    })
  }
