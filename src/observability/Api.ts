import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "../http/Authentication.js"
import { ForbiddenWire } from "../http/Errors.js"
import { CONTENT_TYPE } from "./Prometheus.js"

/** GET /metrics: this replica's metrics in Prometheus's text format, for the operator's key only. */
export class MetricsApi extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(HttpApiSchema.Text({ contentType: CONTENT_TYPE }))
      .addError(ForbiddenWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Scrape metrics",
          description:
            "This replica's metrics in Prometheus's text format (requests, durations, syncs, rate-limit refusals, database pool, memory), for the operator's admin key only: scrape each replica."
        })
      )
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Prometheus metrics of one replica, for the operator."
  ) {}
