import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { labGroup } from "../http/LabEndpoints.js"
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
  .pipe(labGroup) {}
