import { Metric, MetricBoundaries, MetricKey } from "effect"

/**
 * The service's metrics, kept in Effect's own registry (`Metric`): GET /metrics writes them in Prometheus's text
 * format (Prometheus.ts), and with OTEL_EXPORTER_OTLP_ENDPOINT set they are exported over OTLP too.
 */

/** Seconds, from 5 ms to about 80 s, doubling. */
const seconds = MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 15 })

/**
 * The request series' keys: RequestLog.ts takes each series' hook from the registry once and updates it directly
 * (Metric.increment on a metric tagged per request looked its hook up every time: 5 µs a request for each series,
 * measured with a micro-benchmark of 20,000 updates; the hook's own update is a fraction of that).
 */
export const httpRequestsKey = MetricKey.counter("http_requests_total", {
  description: "Requests answered, by method, route (the path template) and status",
  incremental: true
})

export const httpRequestSecondsKey = MetricKey.histogram(
  "http_request_duration_seconds",
  seconds,
  "Time from a request's arrival to its answer, by method and route"
)

export const syncSeconds = Metric.histogram("sync_duration_seconds", seconds, "Duration of a lab's pull or push, by kind")

export const syncFailures = Metric.counter("sync_failures_total", {
  description: "Pulls and pushes that failed (retried later), by kind",
  incremental: true
})

export const rateLimitRefusals = Metric.counter("rate_limit_refusals_total", {
  description: "Requests refused with 429 for a rate limit",
  incremental: true
})

export const databasePool = Metric.gauge("database_pool_connections", {
  description: "PostgreSQL pool connections by state (total, idle, waiting); absent on the embedded database"
})

export const processMemory = Metric.gauge("process_memory_bytes", {
  description: "The process's memory by kind (rss, heap_used, heap_total, external)"
})
