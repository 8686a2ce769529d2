import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Envelope } from "../http/Envelope.js"
import { ServiceUnavailableWire } from "../http/Errors.js"

export const Status = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  database: Schema.Literal("postgresql", "pglite"),
  uptimeSeconds: Schema.Number,
  time: Schema.String
}).annotations({ identifier: "Status" })

export class StatusApi extends HttpApiGroup.make("status")
  .add(
    HttpApiEndpoint.get("status", "/status")
      .addSuccess(Envelope(Status))
      .annotateContext(
        OpenApi.annotations({
          summary: "Get the service status",
          description:
            "Public: no credential needed. The service's version, database kind, uptime and clock. Use it to check the service answers and which version runs; load balancers should probe /healthz and /readyz instead."
        })
      )
  )
  .prefix("/api/v1")
  .annotate(
    OpenApi.Description,
    "The service's public status: version, database and uptime."
  ) {}

const Alive = Schema.Struct({ status: Schema.Literal("alive") }).annotations({ identifier: "Alive" })
const Ready = Schema.Struct({ status: Schema.Literal("ready") }).annotations({ identifier: "Ready" })

/**
 * Probes for a load balancer or an orchestrator: unauthenticated, outside the rate limits, and cheap. /healthz
 * answers while the process runs; /readyz answers 503 while the replica stops (drains), has less free disk than its
 * reserve (writes are refused then), cannot reach its database, or runs on a database its migrations have not reached.
 */
export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Envelope(Alive))
      .annotateContext(
        OpenApi.annotations({
          summary: "Liveness probe",
          description:
            "200 while the process runs. No credential, outside the rate limits: for a load balancer's or an orchestrator's liveness check."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Envelope(Ready))
      .addError(ServiceUnavailableWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Readiness probe",
          description:
            "200 when this replica can serve: not stopping, the disk above its reserve, the database reachable and every migration applied; else 503 saying which. No credential, outside the rate limits: route traffic on it."
        })
      )
  )
  .annotate(
    OpenApi.Description,
    "Probes for load balancers and orchestrators: unauthenticated, outside the rate limits, cheap."
  ) {}
