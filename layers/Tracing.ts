import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Headers from "@effect/platform/Headers"
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { Config, Layer, Option } from "effect"
import { VERSION } from "../src/Api.js"

/**
 * OpenTelemetry over OTLP/HTTP (JSON), on when the standard OTEL_EXPORTER_OTLP_ENDPOINT is set: spans (a request,
 * a sync job, a git network call, an SQL statement; a request's span carries its `request.id`) to `/v1/traces`,
 * the metrics of GET /metrics to `/v1/metrics`. OTEL_SERVICE_NAME names the service (default lab-service);
 * OTEL_BSP_SCHEDULE_DELAY is how often spans are sent, in ms (default 5000).
 */
export const TracingSettings = Config.all({
  endpoint: Config.option(Config.url("OTEL_EXPORTER_OTLP_ENDPOINT")),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("lab-service")),
  exportMillis: Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(
    Config.validate({ message: "must be a positive whole number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(5_000)
  )
}).pipe(
  Config.map(({ endpoint, ...rest }) => Option.map(endpoint, (url) => ({ endpoint: url, ...rest })))
)
export type TracingSettings = Config.Config.Success<typeof TracingSettings>

export interface Exporter {
  readonly endpoint: URL
  readonly serviceName: string
  readonly exportMillis: number
}

/** Headers that carry a secret besides those @effect/platform redacts (authorization, cookies, x-api-key). */
const SECRET_HEADERS = ["x-gitlab-token"]

export const layer = ({ endpoint, serviceName, exportMillis }: Exporter) => {
  const at = (path: string) => new URL(path, endpoint.href.endsWith("/") ? endpoint : `${endpoint.href}/`).href
  const resource = { serviceName, serviceVersion: VERSION }
  return Layer.mergeAll(
    OtlpTracer.layer({ url: at("v1/traces"), resource, exportInterval: exportMillis }),
    OtlpMetrics.layer({ url: at("v1/metrics"), resource, exportInterval: exportMillis }),
    // a request's span records its headers, the credentials redacted: GitLab sends a webhook's secret as a header
    Layer.fiberRefLocallyScopedWith(Headers.currentRedactedNames, (names) => [...names, ...SECRET_HEADERS])
  ).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
}
