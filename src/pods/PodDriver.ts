import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option, Stream } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { Scheduler } from "../experiments/Scheduler.js"
import type { Pod, PodStatus } from "./Pod.js"
import { type Observed, PodProvider, type ProviderPod } from "./PodProvider.js"
import { PodsRepo } from "./PodsRepo.js"

/** Who the activity feed names for what pods do by themselves. */
const SYSTEM = "pod-provider"

const ACTIVE: ReadonlyArray<PodStatus> = ["starting", "running", "stopping"]

/** How often running pods are marked as seen (a crash is billed up to the last mark). */
const HEARTBEAT = Duration.seconds(30)

export const providerPod = (pod: Pod): ProviderPod => ({
  id: pod.id,
  labId: pod.labId,
  name: pod.name,
  gpu: pod.gpu,
  gpuCount: pod.gpuCount,
  providerRef: pod.providerRef
})

/**
 * The provider side of pods: a per-pod driver fiber does the provider work a request asked for (launch, or stop
 * and, if asked meanwhile, start again), serialised per pod; a watcher per run marks the pod running on the
 * provider's first `running` and failed when the run ends on its own. At start it re-attaches to the pods that were
 * active, at shutdown it stops an ephemeral provider's pods, and meanwhile it marks running pods as seen.
 */
export class PodDriver extends Effect.Service<PodDriver>()("PodDriver", {
  dependencies: [PodsRepo.Default, ActivityRepo.Default, Scheduler.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PodsRepo
    const activity = yield* ActivityRepo
    const provider = yield* PodProvider
    const scheduler = yield* Scheduler
    const scope = yield* Effect.scope
    const locks = new Map<string, Effect.Semaphore>()

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const exclusive = (podId: string) => {
      let lock = locks.get(podId)
      if (!lock) {
        lock = Effect.unsafeMakeSemaphore(1)
        locks.set(podId, lock)
      }
      return lock.withPermits(1)
    }

    const background = (what: string, podId: string, effect: Effect.Effect<void>) =>
      Effect.asVoid(
        Effect.forkIn(
          effect.pipe(Effect.catchAllCause((cause) => Effect.logError(`pod ${podId}: ${what} failed`, cause))),
          scope
        )
      )

    // -----------------------------------------------------------------------
    // what the provider observes

    const markRunning = (pod: Pod, ref: string) =>
      inTransaction(
        Effect.gen(function* () {
          if (!(yield* repo.update(pod.id, { status: "running" }, ["starting"], ref))) return false
          yield* repo.openSession(pod, new Date())
          yield* activity.record({
            labId: pod.labId,
            kind: "pod.running",
            ref: pod.id,
            actor: SYSTEM,
            message: `Pod ${pod.name} is running`,
            data: { provider: provider.name, providerRef: ref }
          })
          return true
        })
      ).pipe(Effect.tap((changed) => (changed ? scheduler.wake : Effect.void)))

    const markFailed = (
      pod: Pod,
      from: ReadonlyArray<PodStatus>,
      ref: string | undefined,
      failure: { readonly exitCode: number | null; readonly message: string }
    ) =>
      inTransaction(
        Effect.gen(function* () {
          const change = { status: "failed" as const, exitCode: failure.exitCode, lastError: failure.message }
          if (!(yield* repo.update(pod.id, change, from, ref))) return false
          yield* repo.closeSession(pod.id, new Date())
          yield* activity.record({
            labId: pod.labId,
            kind: "pod.failed",
            ref: pod.id,
            actor: SYSTEM,
            message: `Pod ${pod.name} failed${failure.exitCode === null ? "" : ` with exit code ${failure.exitCode}`}`,
            data: { exitCode: failure.exitCode, error: failure.message }
          })
          return true
        })
      ).pipe(
        Effect.tap((changed) =>
          changed ? scheduler.podGone(pod.labId, pod.id, `pod ${pod.id} failed: ${failure.message.split("\n")[0]}`) : Effect.void
        )
      )

    const markStopped = (pod: Pod, from: ReadonlyArray<PodStatus>, ref: string | undefined, at: Date, message: string) =>
      inTransaction(
        Effect.gen(function* () {
          if (!(yield* repo.update(pod.id, { status: "stopped" }, from, ref))) return false
          yield* repo.closeSession(pod.id, at)
          yield* activity.record({ labId: pod.labId, kind: "pod.stopped", ref: pod.id, actor: SYSTEM, message, data: {} })
          return true
        })
      ).pipe(
        Effect.tap((changed) => (changed ? scheduler.podGone(pod.labId, pod.id, `pod ${pod.id} stopped while it ran`) : Effect.void))
      )

    /** Follow one run of the pod until the provider reports it ended. */
    const watch = (pod: Pod, ref: string) =>
      provider.watch({ ...providerPod(pod), providerRef: ref }).pipe(
        Stream.runForEach((observed: Observed) => {
          switch (observed.state) {
            case "running":
              return Effect.asVoid(markRunning(pod, ref))
            case "failed":
              return Effect.asVoid(markFailed(pod, ["starting", "running"], ref, observed))
            case "stopped":
              // stopped without being asked (a cloud console, an operator): record it as a stop
              return Effect.asVoid(markStopped(pod, ["starting", "running"], ref, new Date(), `Pod ${pod.name} stopped outside the service`))
            default:
              return Effect.void
          }
        }),
        Effect.catchAll((error) => Effect.asVoid(markFailed(pod, ["starting", "running"], ref, { exitCode: null, message: error.message })))
      )

    // -----------------------------------------------------------------------
    // the driver: provider work, one at a time per pod

    const launch = (pod: Pod) =>
      Effect.gen(function* () {
        const started = yield* Effect.either(provider.start(providerPod(pod)))
        if (started._tag === "Left") {
          yield* markFailed(pod, ["starting"], undefined, { exitCode: null, message: started.left.message })
          return
        }
        const ref = started.right.ref
        // recorded even when a stop came meanwhile, so the stop finds what to stop
        yield* repo.update(pod.id, { providerRef: ref }, ["starting", "stopping"])
        yield* background("watch", pod.id, watch({ ...pod, providerRef: ref }, ref))
      })

    const halt = (pod: Pod) =>
      Effect.gen(function* () {
        if (pod.providerRef !== null) {
          const stopped = yield* Effect.either(provider.stop(providerPod(pod)))
          if (stopped._tag === "Left") {
            yield* markFailed(pod, ["stopping"], undefined, { exitCode: null, message: `stop failed: ${stopped.left.message}` })
            return
          }
        }
        yield* markStopped(pod, ["stopping"], undefined, new Date(), `Pod ${pod.name} stopped`)
      })

    /** Bring the pod where its row says it is going: launch a starting pod, stop a stopping one (then start it again if asked). */
    const drive = (podId: string): Effect.Effect<void> =>
      exclusive(podId)(
        Effect.gen(function* () {
          const found = yield* repo.findById(podId)
          if (Option.isNone(found)) return
          const pod = found.value
          if (pod.status === "starting") return yield* launch(pod)
          if (pod.status !== "stopping") return
          yield* halt(pod)
          const after = yield* repo.findById(podId)
          if (Option.isSome(after) && after.value.status === "stopped" && after.value.desiredStatus === "running") {
            const restarted = yield* restartIn(after.value, "Starting again, as asked while it was stopping")
            if (restarted) yield* launch({ ...after.value, status: "starting" })
          }
        })
      )

    const restartIn = (pod: Pod, message: string) =>
      inTransaction(
        Effect.gen(function* () {
          if (!(yield* repo.update(pod.id, { status: "starting", exitCode: null, lastError: null }, ["stopped"]))) return false
          yield* activity.record({ labId: pod.labId, kind: "pod.start", ref: pod.id, actor: SYSTEM, message, data: {} })
          return true
        })
      )

    // -----------------------------------------------------------------------
    // start-up and shutdown

    /** Pods that were active when the service last stopped: re-attach, or record that they are gone. */
    const recover = Effect.gen(function* () {
      for (const pod of yield* repo.inStatus(ACTIVE)) {
        const ref = pod.providerRef
        if (!provider.ephemeral && ref !== null) {
          const observed = yield* Effect.either(provider.status(providerPod(pod)))
          if (observed._tag === "Right" && (observed.right.state === "running" || observed.right.state === "starting")) {
            if (pod.status === "stopping") yield* background("stop", pod.id, drive(pod.id))
            else yield* background("watch", pod.id, watch(pod, ref))
            continue
          }
        }
        const seen = Option.getOrElse(yield* repo.lastSeen(pod.id), () => pod.updatedAt)
        yield* markStopped(pod, ACTIVE, undefined, seen, `Pod ${pod.name} was not running when the service started again`)
      }
      for (const pod of yield* repo.wantedButStopped) {
        if (yield* restartIn(pod, `Starting pod ${pod.name} again: it is wanted running`)) {
          yield* background("start", pod.id, drive(pod.id))
        }
      }
    })

    // added before any fiber is forked into the scope, so it runs after they are interrupted
    yield* Effect.addFinalizer(() =>
      provider.ephemeral
        ? Effect.gen(function* () {
            const active = yield* repo.inStatus(ACTIVE)
            yield* Effect.forEach(
              active,
              (pod) =>
                Effect.zipRight(
                  Effect.ignore(provider.stop(providerPod(pod))),
                  markStopped(pod, ACTIVE, undefined, new Date(), `Pod ${pod.name} stopped: the service shut down`)
                ),
              { concurrency: "unbounded", discard: true }
            )
          }).pipe(Effect.catchAllCause((cause) => Effect.logError("stopping pods at shutdown failed", cause)))
        : Effect.void
    )

    // Record the last time each running pod was seen, so a crash does not bill the downtime.
    // Only after recovery has read the previous run's marks, and only after the first interval.
    const heartbeat = Effect.forever(
      Effect.zipRight(
        Effect.sleep(HEARTBEAT),
        Effect.suspend(() => repo.touchRunning(new Date()))
      )
    ).pipe(Effect.catchAllCause((cause) => Effect.logError("pod heartbeat failed", cause)))
    yield* Effect.forkScoped(
      Effect.zipRight(
        recover.pipe(Effect.catchAllCause((cause) => Effect.logError("recovering pods at start failed", cause))),
        heartbeat
      )
    )

    return {
      /** Do in the background what the pod's row now asks for (`what` names it in a failure's log line). */
      drive: (what: string, podId: string) => background(what, podId, drive(podId)),
      /** A deleted pod's lock is let go. */
      forget: (podId: string) => Effect.sync(() => locks.delete(podId))
    }
  })
}) {}
