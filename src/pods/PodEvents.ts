import { Effect, Stream } from "effect"
import type { ResourceDeps } from "../activity/ResourceService.js"
import type { Scheduler } from "../experiments/Scheduler.js"
import type { Pod, PodStatus } from "./Pod.js"
import type { Observed, PodProviderShape, ProviderPod } from "./PodProvider.js"
import type { PodsRepo } from "./PodsRepo.js"
import { inTransaction } from "../db/Transaction.js"

/**
 * What happens to a pod by itself, as the provider observes it: each is one transaction that changes the row
 * only when it is still in the status the observer expects (so it never undoes a newer decision), records a
 * session boundary and an activity entry, and tells the experiments scheduler. True when the row changed.
 */

/** Who the activity feed names for what pods do by themselves. */
export const SYSTEM = "pod-provider"

export interface PodEventDeps extends ResourceDeps<PodsRepo> {
  readonly provider: PodProviderShape
  readonly scheduler: Scheduler
}

export const providerPod = (pod: Pod): ProviderPod => ({
  id: pod.id,
  labId: pod.labId,
  name: pod.name,
  gpu: pod.gpu,
  gpuCount: pod.gpuCount,
  providerRef: pod.providerRef
})

const transaction = <A, E>(deps: PodEventDeps, effect: Effect.Effect<A, E>) => inTransaction(deps.sql)(effect)

/** An activity entry of the system about the pod. */
const record = (deps: PodEventDeps, pod: Pod, kind: string, message: string, data: Record<string, unknown>) =>
  deps.activity.record({ labId: pod.labId, kind, ref: pod.id, actor: SYSTEM, message, data })

export const markRunning = (deps: PodEventDeps, pod: Pod, ref: string) =>
  transaction(
    deps,
    Effect.gen(function* () {
      if (!(yield* deps.repo.update(pod.id, { status: "running" }, ["starting"], ref))) return false
      yield* deps.repo.openSession(pod, new Date())
      yield* record(deps, pod, "pod.running", `Pod ${pod.name} is running`, { provider: deps.provider.name, providerRef: ref })
      return true
    })
  ).pipe(Effect.tap((changed) => (changed ? deps.scheduler.wake : Effect.void)))

export const markFailed = (
  deps: PodEventDeps,
  pod: Pod,
  from: ReadonlyArray<PodStatus>,
  ref: string | undefined,
  failure: { readonly exitCode: number | null; readonly message: string }
) =>
  transaction(
    deps,
    Effect.gen(function* () {
      const change = { status: "failed" as const, exitCode: failure.exitCode, lastError: failure.message }
      if (!(yield* deps.repo.update(pod.id, change, from, ref))) return false
      yield* deps.repo.closeSession(pod.id, new Date())
      const code = failure.exitCode === null ? "" : ` with exit code ${failure.exitCode}`
      yield* record(deps, pod, "pod.failed", `Pod ${pod.name} failed${code}`, { exitCode: failure.exitCode, error: failure.message })
      return true
    })
  ).pipe(
    Effect.tap((changed) =>
      changed ? deps.scheduler.podGone(pod.labId, pod.id, `pod ${pod.id} failed: ${failure.message.split("\n")[0]}`) : Effect.void
    )
  )

export const markStopped = (
  deps: PodEventDeps,
  pod: Pod,
  from: ReadonlyArray<PodStatus>,
  ref: string | undefined,
  at: Date,
  message: string
) =>
  transaction(
    deps,
    Effect.gen(function* () {
      if (!(yield* deps.repo.update(pod.id, { status: "stopped" }, from, ref))) return false
      yield* deps.repo.closeSession(pod.id, at)
      yield* record(deps, pod, "pod.stopped", message, {})
      return true
    })
  ).pipe(
    Effect.tap((changed) => (changed ? deps.scheduler.podGone(pod.labId, pod.id, `pod ${pod.id} stopped while it ran`) : Effect.void))
  )

/** A stopped pod wanted running goes back to starting (the driver then launches it). */
export const restartIn = (deps: PodEventDeps, pod: Pod, message: string) =>
  transaction(
    deps,
    Effect.gen(function* () {
      if (!(yield* deps.repo.update(pod.id, { status: "starting", exitCode: null, lastError: null }, ["stopped"]))) return false
      yield* record(deps, pod, "pod.start", message, {})
      return true
    })
  )

/** Follow one run of the pod until the provider reports it ended. */
export const watch = (deps: PodEventDeps, pod: Pod, ref: string) =>
  deps.provider.watch({ ...providerPod(pod), providerRef: ref }).pipe(
    Stream.runForEach((observed: Observed) => {
      switch (observed.state) {
        case "running":
          return Effect.asVoid(markRunning(deps, pod, ref))
        case "failed":
          return Effect.asVoid(markFailed(deps, pod, ["starting", "running"], ref, observed))
        case "stopped":
          // stopped without being asked (a cloud console, an operator): record it as a stop
          return Effect.asVoid(
            markStopped(deps, pod, ["starting", "running"], ref, new Date(), `Pod ${pod.name} stopped outside the service`)
          )
        default:
          return Effect.void
      }
    }),
    Effect.catchAll((error) =>
      Effect.asVoid(markFailed(deps, pod, ["starting", "running"], ref, { exitCode: null, message: error.message }))
    )
  )
