import { Duration, Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { Scheduler } from "../experiments/Scheduler.js"
import type { Pod, PodStatus } from "./Pod.js"
import { markFailed, markStopped, type PodEventDeps, providerPod, restartIn, watch } from "./PodEvents.js"
import { PodProvider } from "./PodProvider.js"
import { PodsRepo } from "./PodsRepo.js"

export { providerPod } from "./PodEvents.js"

const ACTIVE: ReadonlyArray<PodStatus> = ["starting", "running", "stopping"]

/** How often running pods are marked as seen (a crash is billed up to the last mark). */
const HEARTBEAT = Duration.seconds(30)

interface DriverDeps extends PodEventDeps {
  /** Run in the background, in the driver's scope; a failure is logged naming the work and the pod. */
  readonly background: (what: string, podId: string, effect: Effect.Effect<void>) => Effect.Effect<void>
}

const launch = (deps: DriverDeps, pod: Pod) =>
  Effect.gen(function* () {
    const started = yield* Effect.either(deps.provider.start(providerPod(pod)))
    if (started._tag === "Left") {
      yield* markFailed(deps, pod, ["starting"], undefined, { exitCode: null, message: started.left.message })
      return
    }
    const ref = started.right.ref
    // recorded even when a stop came meanwhile, so the stop finds what to stop
    yield* deps.repo.update(pod.id, { providerRef: ref }, ["starting", "stopping"])
    yield* deps.background("watch", pod.id, watch(deps, { ...pod, providerRef: ref }, ref))
  })

const halt = (deps: DriverDeps, pod: Pod) =>
  Effect.gen(function* () {
    if (pod.providerRef !== null) {
      const stopped = yield* Effect.either(deps.provider.stop(providerPod(pod)))
      if (stopped._tag === "Left") {
        yield* markFailed(deps, pod, ["stopping"], undefined, { exitCode: null, message: `stop failed: ${stopped.left.message}` })
        return
      }
    }
    yield* markStopped(deps, pod, ["stopping"], undefined, new Date(), `Pod ${pod.name} stopped`)
  })

/** Bring the pod where its row says it is going: launch a starting pod, stop a stopping one (then start it again if asked). */
const driveOnce = (deps: DriverDeps, podId: string) =>
  Effect.gen(function* () {
    const found = yield* deps.repo.findById(podId)
    if (Option.isNone(found)) return
    const pod = found.value
    if (pod.status === "starting") return yield* launch(deps, pod)
    if (pod.status !== "stopping") return
    yield* halt(deps, pod)
    const after = yield* deps.repo.findById(podId)
    if (Option.isSome(after) && after.value.status === "stopped" && after.value.desiredStatus === "running") {
      const restarted = yield* restartIn(deps, after.value, "Starting again, as asked while it was stopping")
      if (restarted) yield* launch(deps, { ...after.value, status: "starting" })
    }
  })

/** Pods that were active when the service last stopped: re-attach, or record that they are gone. */
const recover = (deps: DriverDeps, drive: (podId: string) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    for (const pod of yield* deps.repo.inStatus(ACTIVE)) {
      const ref = pod.providerRef
      if (!deps.provider.ephemeral && ref !== null) {
        const observed = yield* Effect.either(deps.provider.status(providerPod(pod)))
        if (observed._tag === "Right" && (observed.right.state === "running" || observed.right.state === "starting")) {
          if (pod.status === "stopping") yield* deps.background("stop", pod.id, drive(pod.id))
          else yield* deps.background("watch", pod.id, watch(deps, pod, ref))
          continue
        }
      }
      const seen = Option.getOrElse(yield* deps.repo.lastSeen(pod.id), () => pod.updatedAt)
      yield* markStopped(deps, pod, ACTIVE, undefined, seen, `Pod ${pod.name} was not running when the service started again`)
    }
    for (const pod of yield* deps.repo.wantedButStopped) {
      if (yield* restartIn(deps, pod, `Starting pod ${pod.name} again: it is wanted running`)) {
        yield* deps.background("start", pod.id, drive(pod.id))
      }
    }
  })

/** At shutdown, an ephemeral provider's pods die with the process: stop them and say so. */
const stopAll = (deps: DriverDeps) =>
  Effect.gen(function* () {
    const active = yield* deps.repo.inStatus(ACTIVE)
    yield* Effect.forEach(
      active,
      (pod) =>
        Effect.zipRight(
          Effect.ignore(deps.provider.stop(providerPod(pod))),
          markStopped(deps, pod, ACTIVE, undefined, new Date(), `Pod ${pod.name} stopped: the service shut down`)
        ),
      { concurrency: "unbounded", discard: true }
    )
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("stopping pods at shutdown failed", cause)))

/**
 * The provider side of pods: a per-pod driver fiber does the provider work a request asked for (launch, or stop
 * and, if asked meanwhile, start again), serialised per pod; a watcher per run marks the pod running on the
 * provider's first `running` and failed when the run ends on its own (PodEvents.ts). At start it re-attaches to
 * the pods that were active, at shutdown it stops an ephemeral provider's pods, and meanwhile it marks running
 * pods as seen.
 */
export class PodDriver extends Effect.Service<PodDriver>()("PodDriver", {
  dependencies: [PodsRepo.Default, ActivityRepo.Default, Scheduler.Default],
  scoped: Effect.gen(function* () {
    const scope = yield* Effect.scope
    const locks = new Map<string, Effect.Semaphore>()
    const deps: DriverDeps = {
      ...(yield* Effect.all({ ...resourceDeps(PodsRepo), provider: PodProvider, scheduler: Scheduler })),
      background: (what, podId, effect) =>
        Effect.asVoid(
          Effect.forkIn(effect.pipe(Effect.catchAllCause((cause) => Effect.logError(`pod ${podId}: ${what} failed`, cause))), scope)
        )
    }

    const exclusive = (podId: string) => {
      let lock = locks.get(podId)
      if (!lock) {
        lock = Effect.unsafeMakeSemaphore(1)
        locks.set(podId, lock)
      }
      return lock.withPermits(1)
    }

    /** Provider work, one at a time per pod. */
    const drive = (podId: string): Effect.Effect<void> => exclusive(podId)(driveOnce(deps, podId))

    // added before any fiber is forked into the scope, so it runs after they are interrupted
    yield* Effect.addFinalizer(() => (deps.provider.ephemeral ? stopAll(deps) : Effect.void))

    // Record the last time each running pod was seen, so a crash does not bill the downtime.
    // Only after recovery has read the previous run's marks, and only after the first interval.
    const heartbeat = Effect.forever(
      Effect.zipRight(
        Effect.sleep(HEARTBEAT),
        Effect.suspend(() => deps.repo.touchRunning(new Date()))
      )
    ).pipe(Effect.catchAllCause((cause) => Effect.logError("pod heartbeat failed", cause)))
    yield* Effect.forkScoped(
      Effect.zipRight(
        recover(deps, drive).pipe(Effect.catchAllCause((cause) => Effect.logError("recovering pods at start failed", cause))),
        heartbeat
      )
    )

    return {
      /** Do in the background what the pod's row now asks for (`what` names it in a failure's log line). */
      drive: (what: string, podId: string) => deps.background(what, podId, drive(podId)),
      /** A deleted pod's lock is let go. */
      forget: (podId: string) => Effect.sync(() => locks.delete(podId))
    }
  })
}) {}
