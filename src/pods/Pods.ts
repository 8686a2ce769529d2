import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { BadGateway, Conflict, NotFound } from "../http/Errors.js"
import { Quotas } from "../quotas/Quotas.js"
import { type CreatePod, type Pod, PodMachine } from "./Pod.js"
import { PodDriver, providerPod } from "./PodDriver.js"
import { PodProvider } from "./PodProvider.js"
import { type PodFilter, PodsRepo } from "./PodsRepo.js"

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
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PodsRepo
    const activity = yield* ActivityRepo
    const provider = yield* PodProvider
    const quotas = yield* Quotas
    const driver = yield* PodDriver

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

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
        if (launched) yield* driver.drive("start", id)
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
        if (halting) yield* driver.drive("stop", id)
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
            yield* driver.forget(id)
            return current
          })
        )
      })

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
