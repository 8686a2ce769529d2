import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Authentication } from "../auth/Authentication.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { IngestTelemetry, TelemetryAggregate, TelemetryBatch, TelemetryEvent, TelemetryQuery } from "./TelemetryEvent.js"

export class TelemetryApi extends HttpApiGroup.make("telemetry")
  .add(
    HttpApiEndpoint.get("query", "/telemetry")
      .setUrlParams(TelemetryQuery)
      .addSuccess(ListEnvelope(TelemetryEvent).annotations({ description: "aggregate=none (default): raw events, newest first" }))
      .addSuccess(
        ListEnvelope(TelemetryAggregate).annotations({
          description: "aggregate=avg|sum|min|max|count: one value per metric name (and bucket), newest bucket first"
        })
      )
  )
  .add(
    HttpApiEndpoint.post("ingest", "/telemetry")
      .setPayload(IngestTelemetry)
      .addSuccess(Envelope(TelemetryBatch), { status: 201 })
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
