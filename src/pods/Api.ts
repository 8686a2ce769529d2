import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { BadGatewayWire, ConflictWire, ForbiddenWire, NotFoundWire, QuotaExceededWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { CreatePod, Pod, PodAction, PodId, PodStatus } from "./Pod.js"

const PodPath = Schema.Struct({ podId: PodId })

/**
 * Catalog: GET /pods, POST /pods/{podId}/start, POST /pods/{podId}/stop.
 * Extensions: POST /pods (create), GET and DELETE /pods/{podId}.
 */
export class PodsApi extends HttpApiGroup.make("pods")
  .add(
    HttpApiEndpoint.get("list", "/pods")
      .setUrlParams(Schema.Struct({ labId: LabRef, status: Schema.optional(PodStatus), ...PageParams }))
      .addSuccess(ListEnvelope(Pod))
      .annotate(OpenApi.Summary, "The lab's pods, newest first")
  )
  .add(
    HttpApiEndpoint.post("create", "/pods")
      .setPayload(CreatePod)
      .addSuccess(Envelope(Pod), { status: 201 })
      .annotate(OpenApi.Summary, "Extension: create a pod (stopped) in the lab.")
  )
  .add(
    HttpApiEndpoint.get("get", "/pods/:podId")
      .setPath(PodPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Pod))
      .annotate(OpenApi.Summary, "Extension: one pod, with uptime and cost computed from its sessions.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/pods/:podId")
      .setPath(PodPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Pod))
      .addError(BadGatewayWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Extension: delete a stopped or failed pod (409 otherwise). Its sessions, and so its costs, stay.")
  )
  .add(
    HttpApiEndpoint.post("start", "/pods/:podId/start")
      .setPath(PodPath)
      .setPayload(PodAction)
      .addSuccess(Envelope(Pod), { status: 202 })
      .addError(QuotaExceededWire)
      .addError(ConflictWire)
      .annotate(
        OpenApi.Summary,
        "202 with `starting` (or `running` when it already runs). Safe to repeat. 403 quota_exceeded past the plan's running pods."
      )
  )
  .add(
    HttpApiEndpoint.post("stop", "/pods/:podId/stop")
      .setPath(PodPath)
      .setPayload(PodAction)
      .addSuccess(Envelope(Pod), { status: 202 })
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "202 with `stopping` (or `stopped` when it is not running). Safe to repeat.")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(OpenApi.Description, "Compute pods with desired and actual status, run through a PodProvider (local processes by default).") {}
