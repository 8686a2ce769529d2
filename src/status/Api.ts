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
  .add(HttpApiEndpoint.get("status", "/status").addSuccess(Envelope(Status)))
  .prefix("/api/v1") {}

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
      .annotate(OpenApi.Summary, "Liveness: the process answers")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Envelope(Ready))
      .addError(ServiceUnavailableWire)
      .annotate(OpenApi.Summary, "Readiness: not stopping, disk above its reserve, database reachable, migrations applied")
  ) {}
