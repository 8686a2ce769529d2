import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps } from "../activity/ResourceService.js"
import { NotFoundInLab, orNotFound, StateConflict, UpstreamFailed } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import type { LabId } from "../labs/LabId.js"
import { Quotas } from "../quotas/Quotas.js"
import { type CreatePod, type Pod, PodId, PodMachine } from "./Pod.js"
import { PodDriver } from "./PodDriver.js"
import { providerPod } from "./PodEvents.js"
import { PodProvider } from "./PodProvider.js"
import { type PodFilter, PodsRepo, type StatusChange } from "./PodsRepo.js"
import { inTransaction } from "../db/Transaction.js"
import { insertLogged } from "../activity/Changes.js"

const RESOURCE = "pod"

/** What the operations on a pod work with. */
interface Deps extends ResourceDeps<PodsRepo> {
  readonly quotas: Quotas
}

const mustFind = (deps: Deps, labId: LabId, id: PodId) => orNotFound(RESOURCE, id)(deps.repo.find(labId, id))

/** The pod, its row locked for the rest of the transaction. */
const locked = (deps: Deps, labId: LabId, id: PodId) =>
  Effect.flatMap(deps.repo.lock(labId, id), (ok) =>
    ok ? mustFind(deps, labId, id) : Effect.fail(new NotFoundInLab({ resource: RESOURCE, id }))
  )

/** A request's change of the pod, with its activity entry (`kind`); the pod as it is then. */
const change = (deps: Deps, labId: LabId, pod: Pod, actor: string, kind: string, set: StatusChange, message: string) =>
  Effect.gen(function* () {
    yield* deps.repo.update(pod.id, set)
    yield* deps.activity.record({ labId, kind, ref: pod.id, actor, message, data: { from: pod.status } })
    return yield* mustFind(deps, labId, pod.id)
  })

/** Start, in the caller's transaction: `launched` when the driver has to launch it. */
const start = (deps: Deps, labId: LabId, id: PodId, actor: string) =>
  Effect.gen(function* () {
    const pod = yield* locked(deps, labId, id)
    if (pod.status === "starting" || pod.status === "running") return { pod, launched: false }
    if (pod.status === "stopping") {
      if (pod.desiredStatus === "running") return { pod, launched: false }
      // it will start again once stopped: it needs a slot now (quota: QUOTA_RUNNING_PODS)
      yield* deps.quotas.runningPods(labId, id)
      const again = `Asked pod ${pod.name} to start again once it has stopped`
      return { pod: yield* change(deps, labId, pod, actor, "pod.start", { desiredStatus: "running" }, again), launched: false }
    }
    yield* transition(`pod ${id}`, PodMachine, pod.status, "starting")
    yield* deps.quotas.runningPods(labId, id)
    const set: StatusChange = { status: "starting", desiredStatus: "running", exitCode: null, lastError: null }
    return { pod: yield* change(deps, labId, pod, actor, "pod.start", set, `Starting pod ${pod.name}`), launched: true }
  })

/** Stop, in the caller's transaction: `halting` when the driver has to stop it. */
const stop = (deps: Deps, labId: LabId, id: PodId, actor: string) =>
  Effect.gen(function* () {
    const pod = yield* locked(deps, labId, id)
    switch (pod.status) {
      case "stopped":
      case "stopping": {
        if (pod.desiredStatus === "stopped") return { pod, halting: false }
        const stays = `Pod ${pod.name} will stay stopped`
        return { pod: yield* change(deps, labId, pod, actor, "pod.stop", { desiredStatus: "stopped" }, stays), halting: false }
      }
      case "failed": {
        yield* transition(`pod ${id}`, PodMachine, pod.status, "stopped")
        const set: StatusChange = { status: "stopped", desiredStatus: "stopped" }
        return { pod: yield* change(deps, labId, pod, actor, "pod.stop", set, `Stopped failed pod ${pod.name}`), halting: false }
      }
      default: {
        yield* transition(`pod ${id}`, PodMachine, pod.status, "stopping")
        const set: StatusChange = { status: "stopping", desiredStatus: "stopped" }
        return { pod: yield* change(deps, labId, pod, actor, "pod.stop", set, `Stopping pod ${pod.name}`), halting: true }
      }
    }
  })

const deletable = (p: Pod) =>
  p.status === "stopped" || p.status === "failed"
    ? Effect.void
    : Effect.fail(new StateConflict({ resource: RESOURCE, id: p.id, problem: `pod ${p.id} is ${p.status}: stop it before deleting it` }))

const newPod = (labId: LabId, input: Omit<CreatePod, "labId">, provider: string) => {
  const now = new Date()
  return {
    id: PodId.make(newId("pod")),
    labId,
    name: input.name,
    gpu: input.gpu,
    gpuCount: input.gpuCount ?? (input.gpu === null ? 0 : 1),
    costPerHour: input.costPerHour,
    currency: input.currency,
    provider,
    desiredStatus: "stopped" as const,
    status: "stopped" as const,
    createdAt: now,
    updatedAt: now
  }
}

/**
 * Pods: desired status (what start and stop asked for) and actual status
 * (what the provider observes). Requests change the row and answer 202 at
 * once; the pod's driver (PodDriver.ts) then does the provider work. Every
 * stretch of running is a session (started_at, stopped_at, cost_per_hour):
 * uptime and costs are computed from them.
 */
export class Pods extends Effect.Service<Pods>()("Pods", {
  dependencies: [PodsRepo.Default, ActivityRepo.Default, Quotas.Default, PodDriver.Default],
  effect: Effect.gen(function* () {
    const provider = yield* PodProvider
    const driver = yield* PodDriver
    const deps: Deps = yield* Effect.all({ ...resourceDeps(PodsRepo), quotas: Quotas })
    const { sql, repo, activity } = deps

    const transaction = inTransaction(sql)

    const create = (labId: LabId, input: Omit<CreatePod, "labId">, actor: string) =>
      transaction(
        Effect.gen(function* () {
          const pod = newPod(labId, input, provider.name)
          yield* insertLogged(activity, repo.insert, pod, actor, {
            kind: "pod.created",
            message: `Created pod ${input.name}`,
            data: { gpu: input.gpu, costPerHour: input.costPerHour, currency: input.currency }
          })
          return yield* mustFind(deps, labId, pod.id)
        })
      )

    /** Delete a stopped or failed pod; its sessions stay, so past costs do. */
    const remove = (labId: LabId, id: PodId, actor: string) =>
      Effect.gen(function* () {
        const pod = yield* mustFind(deps, labId, id)
        yield* deletable(pod)
        yield* provider.remove(providerPod(pod)).pipe(
          Effect.mapError((e) => new UpstreamFailed({ reason: `the pod provider could not release pod ${id}: ${e.message}` }))
        )
        return yield* transaction(
          Effect.gen(function* () {
            const current = yield* locked(deps, labId, id)
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
            yield* driver.forget(id)
            return current
          })
        )
      })

    return {
      list: (labId: LabId, filter: PodFilter) => repo.list(labId, filter),
      get: (labId: LabId, id: PodId) => mustFind(deps, labId, id),
      create,
      /** Start: 202 with `starting` (or the state it is already in). Safe to repeat. */
      start: (labId: LabId, id: PodId, actor: string) =>
        Effect.gen(function* () {
          const { pod, launched } = yield* transaction(start(deps, labId, id, actor))
          if (launched) yield* driver.drive("start", id)
          return pod
        }),
      /** Stop: 202 with `stopping` (or `stopped`). Safe to repeat. */
      stop: (labId: LabId, id: PodId, actor: string) =>
        Effect.gen(function* () {
          const { pod, halting } = yield* transaction(stop(deps, labId, id, actor))
          if (halting) yield* driver.drive("stop", id)
          return pod
        }),
      remove
    }
  })
}) {}
