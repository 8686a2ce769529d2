import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option, Stream } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { Scheduler } from "../experiments/Scheduler.js"
import { BadGateway, Conflict, NotFound } from "../http/Errors.js"
import { Quotas } from "../quotas/Quotas.js"
import { type CreatePod, type Pod, PodMachine, type PodStatus } from "./Pod.js"
import { type Observed, PodProvider, type ProviderPod } from "./PodProvider.js"
import { type PodFilter, PodsRepo } from "./PodsRepo.js"

/** Who the activity feed names for what pods do by themselves. */
const SYSTEM = "pod-provider"

const ACTIVE: ReadonlyArray<PodStatus> = ["starting", "running", "stopping"]

/** How often running pods are marked as seen (a crash is billed up to the last mark). */
const HEARTBEAT = Duration.seconds(30)

const providerPod = (pod: Pod): ProviderPod => ({
  id: pod.id,
  labId: pod.labId,
  name: pod.name,
  gpu: pod.gpu,
  gpuCount: pod.gpuCount,
  providerRef: pod.providerRef
})

/**
 * Pods: desired status (what start and stop asked for) and actual status
 * (what the provider observes). Requests change the row and answer 202 at
 * once; a per-pod driver fiber then does the provider work (launch, or stop
 * and, if asked meanwhile, start again), serialised per pod. A watcher per run
 * marks the pod running on the provider's first `running` and failed when the
 * run ends on its own. Every stretch of running is a session (started_at,
 * stopped_at, cost_per_hour): uptime and costs are computed from them.
 */
export class Pods extends Effect.Service<Pods>()("Pods", {
  dependencies: [PodsRepo.Default, ActivityRepo.Default, Scheduler.Default, Quotas.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PodsRepo
    const activity = yield* ActivityRepo
    const provider = yield* PodProvider
    const scheduler = yield* Scheduler
    const quotas = yield* Quotas
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
    // requests

    const mustFind = (labId: string, id: string) =>
      Effect.flatMap(
        repo.find(labId, id),
        Option.match({ onNone: () => Effect.fail(new NotFound({ message: `no pod ${id} in this lab` })), onSome: Effect.succeed })
      )

    const locked = (labId: string, id: string) =>
      Effect.flatMap(repo.lock(labId, id), (ok) => (ok ? mustFind(labId, id) : Effect.fail(new NotFound({ message: `no pod ${id} in this lab` }))))

    const create = (labId: string, input: Omit<CreatePod, "labId">, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const now = new Date()
          const id = newId("pod")
          yield* repo.insert({
            id,
            labId,
            name: input.name,
            gpu: input.gpu,
            gpuCount: input.gpuCount ?? (input.gpu === null ? 0 : 1),
            costPerHour: input.costPerHour,
            currency: input.currency,
            provider: provider.name,
            desiredStatus: "stopped",
            status: "stopped",
            createdAt: now,
            updatedAt: now
          })
          yield* activity.record({
            labId,
            kind: "pod.created",
            ref: id,
            actor,
            message: `Created pod ${input.name}`,
            data: { gpu: input.gpu, costPerHour: input.costPerHour, currency: input.currency }
          })
          return yield* mustFind(labId, id)
        })
      )

    /** Start: 202 with `starting` (or the state it is already in). Safe to repeat. */
    const start = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const { pod, launched } = yield* inTransaction(
          Effect.gen(function* () {
            const pod = yield* locked(labId, id)
            if (pod.status === "starting" || pod.status === "running") return { pod, launched: false }
            const record = (message: string) =>
              activity.record({ labId, kind: "pod.start", ref: id, actor, message, data: { from: pod.status } })
            if (pod.status === "stopping") {
              if (pod.desiredStatus !== "running") {
                // it will start again once stopped: it needs a slot now (quota: QUOTA_RUNNING_PODS)
                yield* quotas.runningPods(labId, id)
                yield* repo.update(id, { desiredStatus: "running" })
                yield* record(`Asked pod ${pod.name} to start again once it has stopped`)
              }
              return { pod: yield* mustFind(labId, id), launched: false }
            }
            yield* transition(`pod ${id}`, PodMachine, pod.status, "starting")
            yield* quotas.runningPods(labId, id)
            yield* repo.update(id, { status: "starting", desiredStatus: "running", exitCode: null, lastError: null })
            yield* record(`Starting pod ${pod.name}`)
            return { pod: yield* mustFind(labId, id), launched: true }
          })
        )
        if (launched) yield* background("start", id, drive(id))
        return pod
      })

    /** Stop: 202 with `stopping` (or `stopped`). Safe to repeat. */
    const stop = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const { pod, halting } = yield* inTransaction(
          Effect.gen(function* () {
            const pod = yield* locked(labId, id)
            const record = (message: string) =>
              activity.record({ labId, kind: "pod.stop", ref: id, actor, message, data: { from: pod.status } })
            switch (pod.status) {
              case "stopped":
              case "stopping": {
                if (pod.desiredStatus === "stopped") return { pod, halting: false }
                yield* repo.update(id, { desiredStatus: "stopped" })
                yield* record(`Pod ${pod.name} will stay stopped`)
                return { pod: yield* mustFind(labId, id), halting: false }
              }
              case "failed": {
                yield* transition(`pod ${id}`, PodMachine, pod.status, "stopped")
                yield* repo.update(id, { status: "stopped", desiredStatus: "stopped" })
                yield* record(`Stopped failed pod ${pod.name}`)
                return { pod: yield* mustFind(labId, id), halting: false }
              }
              default: {
                yield* transition(`pod ${id}`, PodMachine, pod.status, "stopping")
                yield* repo.update(id, { status: "stopping", desiredStatus: "stopped" })
                yield* record(`Stopping pod ${pod.name}`)
                return { pod: yield* mustFind(labId, id), halting: true }
              }
            }
          })
        )
        if (halting) yield* background("stop", id, drive(id))
        return pod
      })

    /** Delete a stopped or failed pod; its sessions stay, so past costs do. */
    const remove = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const pod = yield* mustFind(labId, id)
        const deletable = (p: Pod) =>
          p.status === "stopped" || p.status === "failed"
            ? Effect.void
            : Effect.fail(new Conflict({ message: `pod ${id} is ${p.status}: stop it before deleting it` }))
        yield* deletable(pod)
        yield* provider.remove(providerPod(pod)).pipe(
          Effect.mapError((e) => new BadGateway({ message: `the pod provider could not release pod ${id}: ${e.message}` }))
        )
        return yield* inTransaction(
          Effect.gen(function* () {
            const current = yield* locked(labId, id)
            yield* deletable(current)
            yield* repo.remove(labId, id)
            yield* activity.record({
              labId,
              kind: "pod.deleted",
              ref: id,
              actor,
              message: `Deleted pod ${pod.name}`,
              data: { uptimeSeconds: current.uptimeSeconds, cost: current.cost, currency: current.currency }
            })
            locks.delete(id)
            return current
          })
        )
      })

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
      list: (labId: string, filter: PodFilter) => repo.list(labId, filter),
      get: mustFind,
      create,
      start,
      stop,
      remove
    }
  })
}) {}
