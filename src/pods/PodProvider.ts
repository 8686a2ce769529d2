import { Context, Data, Duration, Effect, Schedule, Stream } from "effect"

/** What the pod needs from its provider: who it is and what to run it on. */
export interface ProviderPod {
  readonly id: string
  readonly labId: string
  readonly name: string
  readonly gpu: string | null
  readonly gpuCount: number
  /** The provider's handle from the last `start` (a pid, a cloud pod id); null before the first. */
  readonly providerRef: string | null
}

/** What a provider observes of a pod. `stopped` and `failed` are terminal for one run. */
export type Observed =
  | { readonly state: "starting" | "running" | "stopping" | "stopped" }
  | { readonly state: "failed"; readonly exitCode: number | null; readonly message: string }

export const isTerminal = (o: Observed): boolean => o.state === "stopped" || o.state === "failed"

export class PodProviderError extends Data.TaggedError("PodProviderError")<{ readonly message: string }> {}

/**
 * Where pods run. The Pods service owns the lifecycle (desired vs actual
 * status, sessions, activity); a provider only does and observes:
 *
 * - `start(pod)` launches the pod (or resumes it when `pod.providerRef` names
 *   an existing one) and returns as soon as the provider has accepted it, with
 *   the provider's handle. It need not wait until the pod is running.
 * - `watch(pod)` is the stream of what the provider observes for that handle,
 *   ending with a terminal `stopped` (after `stop`) or `failed` (it ended on its
 *   own). The Pods service marks the pod running on the first `running` and
 *   failed on a `failed`.
 * - `stop(pod)` stops it and returns once it is stopped; stopping a pod that
 *   is not running succeeds.
 * - `status(pod)` is one observation (used at start-up to re-attach).
 * - `remove(pod)` releases what the provider keeps for a pod that is deleted.
 * - `ephemeral`: pods die with this process (local processes), so at shutdown
 *   the service stops them and records it; a cloud provider is not ephemeral:
 *   its pods keep running (and billing) across restarts, and are re-attached.
 *
 * Adding a cloud provider (RunPod's REST API, https://rest.runpod.io/v1, is the
 * reference): a layer in layers/pods/ providing this tag with
 *   start  → `POST /pods` {name, gpuTypeIds: [gpu], gpuCount, imageName, …} the
 *            first time (ref = the returned pod id), `POST /pods/{ref}/start` after;
 *   stop   → `POST /pods/{ref}/stop`, then poll `GET /pods/{ref}` until it reports
 *            EXITED;
 *   status → `GET /pods/{ref}` mapped to Observed (desiredStatus RUNNING with a
 *            runtime → running, without → starting, EXITED → stopped or failed);
 *   watch  → `pollingWatch(status, …)` below;
 *   remove → `DELETE /pods/{ref}` (terminate); ephemeral: false.
 * Errors become PodProviderError (the pod is marked failed with its message).
 * Select it in layers/App.ts `environment(settings)` instead of the local one.
 */
export interface PodProviderShape {
  readonly name: string
  readonly ephemeral: boolean
  readonly start: (pod: ProviderPod) => Effect.Effect<{ readonly ref: string }, PodProviderError>
  readonly stop: (pod: ProviderPod) => Effect.Effect<void, PodProviderError>
  readonly status: (pod: ProviderPod) => Effect.Effect<Observed, PodProviderError>
  readonly watch: (pod: ProviderPod) => Stream.Stream<Observed, PodProviderError>
  readonly remove: (pod: ProviderPod) => Effect.Effect<void, PodProviderError>
}

export class PodProvider extends Context.Tag("PodProvider")<PodProvider, PodProviderShape>() {}

/**
 * `watch` for providers that can only be asked (cloud APIs): poll `status`
 * every `every`, emit each change, end after a terminal observation.
 */
export const pollingWatch = (
  status: (pod: ProviderPod) => Effect.Effect<Observed, PodProviderError>,
  every: Duration.DurationInput
) =>
(pod: ProviderPod): Stream.Stream<Observed, PodProviderError> =>
  Stream.repeatEffectWithSchedule(status(pod), Schedule.spaced(every)).pipe(
    Stream.changesWith((a, b) => a.state === b.state),
    Stream.takeUntil(isTerminal)
  )
