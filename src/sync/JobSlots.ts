import { Context, Effect } from "effect"

/**
 * How many labs' git work runs at once (README "Slow or dead git hosts"). A job (fetch, apply, push) holds a job
 * slot; before taking one, a probe checks that the lab's host answers its ref advertisement now, holding only a
 * probe slot. A host that is slow or dead therefore fails its probe without ever holding a job slot. Labs whose
 * last attempt failed use pools of their own, so however many hosts are failing, labs whose hosts answer keep
 * theirs. A host that passes its probe and then stalls gives its job's slot up while other labs wait (SlotLease.ts).
 */
export interface JobSlotSettings {
  /** GIT_JOB_SLOTS: jobs at once of labs in good standing; bounds memory and CPU on big repositories. */
  readonly jobs: number
  /** GIT_RETRY_JOB_SLOTS: jobs at once of labs whose last attempt failed. */
  readonly retryJobs: number
  /** GIT_PROBE_SLOTS: probes at once of labs in good standing (each an HTTP request, waiting on the network). */
  readonly probes: number
  /** GIT_RETRY_PROBE_SLOTS: probes at once of labs whose last attempt failed. */
  readonly retryProbes: number
  /** GIT_SLOT_STALL_MS: how long a job's host may stall while other labs wait before it gives its slot up (SlotLease.ts). */
  readonly stallMillis: number
}

export const DEFAULT_JOB_SLOTS: JobSlotSettings = { jobs: 2, retryJobs: 1, probes: 16, retryProbes: 4, stallMillis: 1_000 }

export class JobSlots extends Context.Reference<JobSlots>()("JobSlots", { defaultValue: () => DEFAULT_JOB_SLOTS }) {}

/** The pools, as semaphores. */
export interface Slots {
  readonly sizes: JobSlotSettings
  /** Jobs waiting for a slot of the good pool now (SlotLease.ts: a stalled job gives its slot up only to them). */
  readonly demand: { waiting: number }
  readonly jobs: Effect.Semaphore
  readonly retryJobs: Effect.Semaphore
  readonly probes: Effect.Semaphore
  readonly retryProbes: Effect.Semaphore
}

export const makeSlots: Effect.Effect<Slots> = Effect.gen(function* () {
  const sizes = yield* JobSlots
  return {
    sizes,
    demand: { waiting: 0 },
    jobs: yield* Effect.makeSemaphore(sizes.jobs),
    retryJobs: yield* Effect.makeSemaphore(sizes.retryJobs),
    probes: yield* Effect.makeSemaphore(sizes.probes),
    retryProbes: yield* Effect.makeSemaphore(sizes.retryProbes)
  }
})
