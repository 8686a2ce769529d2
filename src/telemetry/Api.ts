import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Query telemetry",
          description:
            "Telemetry events by metric `name` and time range (`from` inclusive, `to` exclusive): raw events, newest first (the default), or aggregated (`aggregate=avg|sum|min|max|count`), per name or per minute, hour or day `bucket`."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("ingest", "/telemetry")
      .setPayload(IngestTelemetry)
      .addSuccess(Envelope(TelemetryBatch), { status: 201 })
      .annotateContext(
        OpenApi.annotations({
          summary: "Send telemetry",
          description:
            "Stores a batch of 1–1,000 numeric events (name, value, optional unit, timestamp and attributes), all or none, and answers what was accepted. Send events in batches rather than one request each."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Numeric events a lab's code and agents send in batches (losses, GPU use, latencies), queried raw or aggregated."
  ) {}
