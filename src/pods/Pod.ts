import { Schema } from "effect"
import { Body, LabRef, LabResource, Name, resourceId, Timestamp } from "../common/Schemas.js"
import type { Transitions } from "../common/StateMachine.js"
import { Amount, Currency } from "../costs/Money.js"

/** What the pod is doing now, as observed through its provider. */
export const PodStatus = Schema.Literal("stopped", "starting", "running", "stopping", "failed").annotations({
  description: "actual status: stopped → starting → running → stopping → stopped, or failed"
})
export type PodStatus = typeof PodStatus.Type

/** What the lab asked for with start and stop. */
export const DesiredStatus = Schema.Literal("running", "stopped")
export type DesiredStatus = typeof DesiredStatus.Type

/**
 * The actual-status machine. `failed → stopped` is a stop acknowledging a
 * failure; `failed → starting` a retry.
 */
export const PodMachine: Transitions<PodStatus> = {
  stopped: ["starting"],
  starting: ["running", "stopping", "failed"],
  running: ["stopping", "failed"],
  stopping: ["stopped", "failed"],
  failed: ["starting", "stopped"]
}

export const PodId = resourceId("PodId", "pod")
export type PodId = typeof PodId.Type

export const Pod = LabResource(PodId, {
  name: Schema.String,
  gpu: Schema.NullOr(Schema.String).annotations({ description: "GPU type, e.g. A100-80GB; null for a CPU pod" }),
  gpuCount: Schema.Number,
  costPerHour: Schema.Number.annotations({ description: "rate while running, in `currency`" }),
  currency: Schema.String,
  provider: Schema.String.annotations({ description: "the PodProvider that runs it: `local` (a local process) by default" }),
  providerRef: Schema.NullOr(Schema.String).annotations({
    description: "the provider's handle of the current or last run: the process id for `local`, the cloud pod id for a cloud provider"
  }),
  desiredStatus: DesiredStatus,
  status: PodStatus,
  exitCode: Schema.NullOr(Schema.Number).annotations({ description: "exit code of a process that ended on its own (status failed)" }),
  lastError: Schema.NullOr(Schema.String).annotations({ description: "why the pod failed, if it did" }),
  uptimeSeconds: Schema.Number.annotations({ description: "total time running over all sessions, the current one included" }),
  cost: Schema.Number.annotations({ description: "uptime × costPerHour over all sessions, in `currency`" }),
  startedAt: Schema.NullOr(Timestamp).annotations({ description: "when the current session began (null unless running)" }),
  stoppedAt: Schema.NullOr(Timestamp).annotations({ description: "when the last session ended" })
}).annotations({ identifier: "Pod" })
export type Pod = typeof Pod.Type

export const CreatePod = Body({
  labId: LabRef,
  name: Name(200),
  gpu: Schema.optionalWith(Schema.NullOr(Name(100)), { default: () => null }),
  gpuCount: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(0, 64)).annotations({ description: "default 1 with a gpu, 0 without" })
  ),
  costPerHour: Amount(100_000),
  currency: Schema.optionalWith(Currency, { default: () => "USD" })
}).annotations({ identifier: "CreatePod" })
export type CreatePod = typeof CreatePod.Type

export const PodAction = Body({ labId: LabRef }).annotations({ identifier: "PodAction" })

/** A pod session: one stretch of running, the record uptime and costs are computed from. */
export const PodSession = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  podId: Schema.String,
  podName: Schema.String,
  costPerHour: Schema.Number,
  currency: Schema.String,
  startedAt: Timestamp,
  stoppedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
})
export type PodSession = typeof PodSession.Type
