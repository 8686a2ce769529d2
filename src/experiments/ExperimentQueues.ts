import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { ExperimentMachine, QueueId } from "./Experiment.js"
import { ExperimentsRepo } from "./ExperimentsRepo.js"
import { inTransaction, named } from "./Lookups.js"
import { QueuesRepo } from "./QueuesRepo.js"
import { Scheduler } from "./Scheduler.js"

/** FIFO queues of experiments, run on the lab's pods by the scheduler. */
export class ExperimentQueues extends Effect.Service<ExperimentQueues>()("ExperimentQueues", {
  dependencies: [QueuesRepo.Default, ExperimentsRepo.Default, ActivityRepo.Default, Scheduler.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity, queues, scheduler } = yield* Effect.all({
      ...resourceDeps(ExperimentsRepo),
      queues: QueuesRepo,
      scheduler: Scheduler
    })

    const transaction = inTransaction({ sql })

    const create = (labId: LabId, name: string, actor: string) =>
      Effect.gen(function* () {
        const taken = new StateConflict({ resource: "queue", id: name, problem: `a queue named ${name} exists in this lab` })
        if (yield* queues.findByName(labId, name)) return yield* taken
        const now = new Date()
        const id = QueueId.make(newId("queue"))
        yield* transaction(
          Effect.gen(function* () {
            yield* queues.insert({ id, labId, name, createdAt: now, updatedAt: now })
            yield* activity.record({ labId, kind: "experiment_queue.created", ref: id, actor, message: `Created queue ${name}`, data: {} })
          }).pipe(Effect.catchIf(isUniqueViolation, () => taken))
        )
        return yield* orNotFound("queue", id)(queues.find(labId, id))
      })

    /** draft → queued in the queue; again in the same queue is a no-op. The scheduler starts it when a pod is free. */
    const enqueue = (labId: LabId, queueId: string, experimentId: string, actor: string) =>
      Effect.gen(function* () {
        const { experiment, queued } = yield* transaction(
          Effect.gen(function* () {
            const queue = yield* named("queueId", "queue", queueId)(queues.find(labId, queueId))
            const current = yield* named("experimentId", "experiment", experimentId)(repo.findForUpdate(labId, experimentId))
            if (current.status === "queued") {
              if (current.queueId === queueId) return { experiment: current, queued: false }
              return yield* new StateConflict({
                resource: "experiment",
                id: experimentId,
                problem: `experiment ${experimentId} is already queued in ${current.queueId}`
              })
            }
            yield* transition(`experiment ${experimentId}`, ExperimentMachine, current.status, "queued")
            yield* repo.update(experimentId, { status: "queued", queueId, queuedAt: new Date() }, ["draft"])
            yield* activity.record({
              labId,
              kind: "experiment.queued",
              ref: experimentId,
              actor,
              message: `Queued ${current.name} in ${queue.name}`,
              data: { queueId, position: queue.length + 1 }
            })
            return { experiment: yield* orNotFound("experiment", experimentId)(repo.find(labId, experimentId)), queued: true }
          })
        )
        if (queued) yield* scheduler.wake
        return experiment
      })

    return { list: (labId: LabId, page: PageQuery) => queues.list(labId, page), create, enqueue }
  })
}) {}
