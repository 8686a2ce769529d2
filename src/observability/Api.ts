import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.js"
import { ForbiddenWire } from "../http/Errors.js"
import { CONTENT_TYPE } from "./Prometheus.js"

/** GET /metrics: this replica's metrics in Prometheus's text format, for the operator's key only. */
export class MetricsApi extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(HttpApiSchema.Text({ contentType: CONTENT_TYPE }))
      .addError(ForbiddenWire)
      .annotate(OpenApi.Summary, "This replica's metrics, Prometheus text format (operator only)")
  )
  .middleware(Authentication) {}
