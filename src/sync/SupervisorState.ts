import { Deferred, Effect, Exit, type Option } from "effect"
import { Unavailable } from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import type { GitError } from "./Git.js"
import type { Slots } from "./JobSlots.js"
import type { LabLocks } from "./LabLocks.js"
import type { PushTurns } from "./PushPacing.js"
import type { SyncResult } from "./RepoLink.js"
import type { SyncEngine } from "./SyncEngine.js"
import type { SyncRepo } from "./SyncRepo.js"

/** The sync supervisor's state (SyncSupervisor.ts holds what it does): what each lab's worker is asked and runs. */

/** What a forced sync can end with besides its result: git failed, or the service stopped first. */
export type SyncNowError = GitError | Unavailable

export interface Waiter {
  readonly subPath: Option.Option<string>
  readonly done: Deferred.Deferred<SyncResult, SyncNowError>
}

/** What a lab's worker has been asked to do since it last looked. */
export interface Wanted {
  readonly pull: boolean
  readonly push: boolean
  readonly waiters: ReadonlyArray<Waiter>
}

/** A lab's state while it has a worker or a link change in progress (then it is forgotten). */
export interface Lab {
  wanted: Wanted
  /** Waiters whose job is running: answered by it, or 503 when the stop cuts it. */
  joined: ReadonlyArray<Waiter>
  /** Opened by a forced sync or the stop: ends a retry wait early. */
  readonly urgent: Effect.Latch
  /** Opened by a pull asked for: ends a wait for the lab's push turn, which holds pushes only. */
  readonly pullAsked: Effect.Latch
  /** Held by each git job and by each link change of the lab (see `exclusive`). */
  readonly lock: Effect.Semaphore
  hasWorker: boolean
  /** The last job failed: the lab's next ones use the retry pools (JobSlots.ts). */
  failing: boolean
  /** When the lab's host last answered (epoch milliseconds): a probe just before is not repeated. */
  answeredAt: number
  /** Link changes holding or waiting for `lock`. */
  holders: number
}

export const nothing: Wanted = { pull: false, push: false, waiters: [] }

export const isWanted = (w: Wanted) => w.pull || w.push || w.waiters.length > 0

export const stopped = () => new Unavailable({ reason: "the service is stopping; retry the sync in a few seconds" })

/** The supervisor's state, which its operations below share. */
export interface Supervision {
  readonly engine: SyncEngine
  readonly locks: LabLocks["Type"]
  readonly repo: SyncRepo
  /** JobSlots.ts: jobs and probes, for labs in good standing and for labs retrying after a failure. */
  readonly slots: Slots
  /** When each busy lab may push next (its writes are pushed together). */
  readonly pushTurns: PushTurns
  readonly labs: Map<LabId, Lab>
  stopping: boolean
  readonly isStopping: Effect.Effect<boolean>
  readonly runWorker: (labId: LabId, worker: Effect.Effect<void>) => unknown
}

export const labOf = (s: Supervision, labId: LabId): Lab => {
  const existing = s.labs.get(labId)
  if (existing) return existing
  const lab: Lab = {
    wanted: nothing,
    joined: [],
    urgent: Effect.unsafeMakeLatch(false),
    pullAsked: Effect.unsafeMakeLatch(false),
    lock: Effect.unsafeMakeSemaphore(1),
    hasWorker: false,
    failing: false,
    answeredAt: 0,
    holders: 0
  }
  s.labs.set(labId, lab)
  return lab
}

export const forgetIfUnused = (s: Supervision, labId: LabId, lab: Lab) => {
  if (!lab.hasWorker && lab.holders === 0 && s.labs.get(labId) === lab) s.labs.delete(labId)
}

export const answerAll = (waiters: ReadonlyArray<Waiter>, exit: Exit.Exit<SyncResult, SyncNowError>) =>
  Effect.forEach(waiters, (w) => Deferred.done(w.done, exit), { discard: true })

/** The job found the lab busy on another replica: what it was asked is wanted again (its forced syncs still wait). */
export const requeue = (s: Supervision, lab: Lab, wanted: Wanted) =>
  s.stopping
    ? answerAll(wanted.waiters, Exit.fail(stopped()))
    : Effect.sync(() => {
        const now = lab.wanted
        lab.wanted = { pull: now.pull || wanted.pull, push: now.push || wanted.push, waiters: [...wanted.waiters, ...now.waiters] }
      })
