import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { Envelope } from "../http/Envelope.js"
import { BadGatewayWire, ConflictWire, QuotaExceededWire } from "../http/Errors.js"
import { createIn, deleteById, getById, labGroup, listOf, paged } from "../http/LabEndpoints.js"
import { CreatePod, Pod, PodAction, PodId, PodStatus } from "./Pod.js"

const PodPath = Schema.Struct({ podId: PodId })

const action = <N extends string>(name: N, verb: string) =>
  HttpApiEndpoint.post(name, `/pods/:podId/${verb}`).setPath(PodPath).setPayload(PodAction).addSuccess(Envelope(Pod), { status: 202 })

/**
 * Catalog: GET /pods, POST /pods/{podId}/start, POST /pods/{podId}/stop.
 * Extensions: POST /pods (create), GET and DELETE /pods/{podId}.
 */
export class PodsApi extends HttpApiGroup.make("pods")
  .add(
    listOf("/pods", paged({ labId: LabRef, status: Schema.optional(PodStatus) }), Pod).annotate(
      OpenApi.Summary,
      "The lab's pods, newest first"
    )
  )
  .add(createIn("/pods", CreatePod, Pod).annotate(OpenApi.Summary, "Extension: create a pod (stopped) in the lab."))
  .add(
    getById("/pods/:podId", PodPath, Pod).annotate(
      OpenApi.Summary,
      "Extension: one pod, with uptime and cost computed from its sessions."
    )
  )
  .add(
    deleteById("/pods/:podId", PodPath, Pod)
      .addError(BadGatewayWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Extension: delete a stopped or failed pod (409 otherwise). Its sessions, and so its costs, stay.")
  )
  .add(
    action("start", "start")
      .addError(QuotaExceededWire)
      .addError(ConflictWire)
      .annotate(
        OpenApi.Summary,
        "202 with `starting` (or `running` when it already runs). Safe to repeat. 403 quota_exceeded past the plan's running pods."
      )
  )
  .add(
    action("stop", "stop")
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "202 with `stopping` (or `stopped` when it is not running). Safe to repeat.")
  )
  .pipe(labGroup)
  .annotate(OpenApi.Description, "Compute pods with desired and actual status, run through a PodProvider (local processes by default).") {}
