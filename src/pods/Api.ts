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
    listOf("/pods", paged({ labId: LabRef, status: Schema.optional(PodStatus) }), Pod).annotateContext(
      OpenApi.annotations({
        summary: "List pods",
        description:
          "The lab's compute pods, newest first, optionally only those in one `status`, each with its desired and actual status."
      })
    )
  )
  .add(
    createIn("/pods", CreatePod, Pod).annotateContext(
      OpenApi.annotations({
        summary: "Create a pod",
        description:
          "Extension. Creates a pod of the lab, `stopped`, with its GPU and its `costPerHour` (what its uptime costs). Start it with POST /api/v1/pods/{podId}/start."
      })
    )
  )
  .add(
    getById("/pods/:podId", PodPath, Pod).annotateContext(
      OpenApi.annotations({
        summary: "Get a pod",
        description:
          "Extension. One pod by id, with its uptime and cost computed from its sessions: poll it after start or stop."
      })
    )
  )
  .add(
    deleteById("/pods/:podId", PodPath, Pod)
      .addError(BadGatewayWire)
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Delete a pod",
          description:
            "Extension. Deletes a stopped or failed pod (409 otherwise: stop it first). Its sessions, and so its costs, stay."
        })
      )
  )
  .add(
    action("start", "start")
      .addError(QuotaExceededWire)
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Start a pod",
          description:
            "Asks for the pod to run: 202 with it `starting` (or as it is when it already starts or runs; a stopping pod starts again once stopped). Safe to repeat. 403 `quota_exceeded` when the lab already runs its plan's number of pods."
        })
      )
  )
  .add(
    action("stop", "stop")
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Stop a pod",
          description:
            "Asks for the pod to stop: 202 with it `stopping` (or as it is when it is stopping or stopped; a failed pod becomes stopped). Safe to repeat. An experiment running on it becomes failed."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Compute pods, with a desired and an actual status (stopped → starting → running → stopping → stopped, or failed), run through a PodProvider (local processes by default). Their uptime is what GET /api/v1/costs bills."
  ) {}
