import { Duration, Effect, Option, Queue, Schedule, Schema } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps } from "../activity/ResourceService.js"
import { newId } from "../common/Ids.js"
import { roundMoney } from "../costs/Money.js"
import { type LabId, systemLab } from "../labs/LabId.js"
import { PodsRepo } from "../pods/PodsRepo.js"
import { countedNotRefused } from "../quotas/RecordsQuota.js"
import { causeIsRestoring } from "../db/RestoreGate.js"
import { CostsRepo } from "./CostsRepo.js"
import { CostId, type Experiment, type ExperimentStatus } from "./Experiment.js"
import { ExperimentsRepo } from "./ExperimentsRepo.js"
import { inTransaction } from "./Lookups.js"

/** The scheduler also runs on this tick, to catch anything a wake-up missed. */
export const TICK = Duration.seconds(5)

/** Who the activity feed names for what the service does by itself. */
export const SCHEDULER = "scheduler"

const IdRows = Schema.Array(Schema.Struct({ id: Schema.String }))

export type Finish = Extract<ExperimentStatus, "completed" | "failed" | "cancelled">

const FINISHED_AS: Record<Finish, string> = { completed: "Completed", failed: "Failed", cancelled: "Cancelled" }

interface Deps extends ResourceDeps<ExperimentsRepo> {
  readonly costs: CostsRepo
  readonly pods: PodsRepo
}

/** Start what can start in one lab (pods without a running experiment take the oldest queued); the number started. */
const scheduleLab = (deps: Deps, labId: LabId) =>
  inTransaction(deps)(
    Effect.gen(function* () {
      const { sql, repo, activity } = deps
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`experiments:${labId}`}))`
      const idle = yield* Schema.decodeUnknown(IdRows)(
        yield* sql`
          SELECT p.id FROM pods p
          WHERE p.lab_id = ${labId} AND p.status = 'running'
            AND NOT EXISTS (SELECT 1 FROM experiments e WHERE e.pod_id = p.id AND e.status = 'running')
          ORDER BY p.created_at, p.id`
      ).pipe(Effect.orDie)
      if (idle.length === 0) return 0
      const next = yield* repo.nextQueued(labId, idle.length)
      let started = 0
      for (const [i, experiment] of next.entries()) {
        const pod = idle[i]
        if (!pod) break
        const changed = yield* repo.update(experiment.id, { status: "running", podId: pod.id, startedAt: new Date() }, ["queued"])
        if (!changed) continue
        started++
        yield* activity.record({
          labId,
          kind: "experiment.started",
          ref: experiment.id,
          actor: SCHEDULER,
          message: `Started ${experiment.name} on pod ${pod.id}`,
          data: { podId: pod.id, queueId: experiment.queueId }
        })
      }
      return started
    })
  )

/** The cost record of a run that ends on a pod: its runtime × the pod's rate (origin `pod`); none for a free pod. */
const chargeRun = (deps: Deps, experiment: Experiment, now: Date) =>
  Effect.gen(function* () {
    if (experiment.status !== "running" || experiment.podId === null || experiment.startedAt === null) return Option.none()
    const pod = yield* deps.pods.findById(experiment.podId)
    if (Option.isNone(pod) || pod.value.costPerHour <= 0) return Option.none()
    const { id, name, costPerHour, currency } = pod.value
    const seconds = Math.max(0, now.getTime() - experiment.startedAt.getTime()) / 1000
    const amount = roundMoney((seconds / 3600) * costPerHour)
    // the run's cost is the service's bookkeeping: a lab at its records quota still ends its experiment
    yield* countedNotRefused(deps.sql)
    yield* deps.costs.insert({
      id: CostId.make(newId("cost")),
      labId: experiment.labId,
      experimentId: experiment.id,
      amount,
      currency,
      category: "compute",
      source: `pod:${id}`,
      description: `${seconds.toFixed(1)} s on pod ${name} at ${costPerHour} ${currency}/h`,
      origin: "pod",
      incurredAt: now,
      createdAt: now
    })
    return Option.some({ amount, currency })
  })

/**
 * Move an experiment to a final status inside the caller's transaction, with its activity entry. A run that ends
 * on a pod gets a cost record of its runtime × the pod's rate (origin `pod`). False when the experiment was no
 * longer in the status it was read in.
 */
const finishIn = (deps: Deps, experiment: Experiment, to: Finish, reason: string | null, actor: string) =>
  Effect.gen(function* () {
    const now = new Date()
    const changed = yield* deps.repo.update(experiment.id, { status: to, statusMessage: reason, finishedAt: now }, [experiment.status])
    if (!changed) return false
    const compute = yield* chargeRun(deps, experiment, now)
    yield* deps.activity.record({
      labId: experiment.labId,
      kind: `experiment.${to}`,
      ref: experiment.id,
      actor,
      message: `${FINISHED_AS[to]} ${experiment.name}${reason ? `: ${reason}` : ""}`,
      data: {
        from: experiment.status,
        podId: experiment.podId,
        reason,
        ...Option.match(compute, { onNone: () => ({}), onSome: (c) => ({ compute: c }) })
      }
    })
    return true
  })

/**
 * Starts queued experiments on free pods, first queued first, and finishes runs. One fiber, woken on enqueue, when
 * a pod starts running, when an experiment finishes, and on a periodic tick. A pass locks each lab (an advisory
 * transaction lock), pairs the lab's running pods that have no running experiment with its oldest queued
 * experiments, and starts them: status running, podId, startedAt. A unique index keeps one running experiment per
 * pod even across replicas. The labs it works on are those of its own rows (`systemLab`).
 */
export class Scheduler extends Effect.Service<Scheduler>()("ExperimentScheduler", {
  dependencies: [ExperimentsRepo.Default, CostsRepo.Default, PodsRepo.Default, ActivityRepo.Default],
  scoped: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(ExperimentsRepo), costs: CostsRepo, pods: PodsRepo })
    const wakeups = yield* Queue.sliding<void>(1)

    const pass = Effect.gen(function* () {
      for (const labId of yield* deps.repo.labsWithQueued) {
        // a lab being restored refuses the start (the restore gate): the next pass after the restore starts it
        const started = yield* Effect.catchAllCause(scheduleLab(deps, systemLab(labId)), (cause) =>
          causeIsRestoring(cause) ? Effect.as(Effect.logDebug(`scheduler: ${labId} is being restored`), 0) : Effect.failCause(cause)
        )
        if (started > 0) yield* Effect.logDebug(`scheduler started ${started} experiment(s) in ${labId}`)
      }
    }).pipe(Effect.catchAllCause((cause) => Effect.logError("experiment scheduler pass failed", cause)))

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(wakeups), pass)))
    yield* Effect.forkScoped(Effect.repeat(Queue.offer(wakeups, undefined), Schedule.spaced(TICK)))

    /** Ask for a pass soon (coalesced). Call it after the transaction that made work possible commits. */
    const wake = Effect.asVoid(Queue.offer(wakeups, undefined))

    /** The pod (of the service's own rows) stopped or failed: what ran on it failed with it. Then others may start. */
    const podGone = (labId: string, podId: string, reason: string) =>
      inTransaction(deps)(
        Effect.gen(function* () {
          for (const experiment of yield* deps.repo.runningOn(podId)) {
            if (experiment.labId === labId) yield* finishIn(deps, experiment, "failed", reason, SCHEDULER)
          }
        })
      ).pipe(Effect.zipRight(wake))

    return {
      wake,
      finishIn: (experiment: Experiment, to: Finish, reason: string | null, actor: string) => finishIn(deps, experiment, to, reason, actor),
      podGone,
      runOnce: pass
    }
  })
}) {}
