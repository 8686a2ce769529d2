import { Context, Duration, Effect, Layer, Schedule, Schema, type Scope } from "effect"

/**
 * The lab's sync lock could not be taken: the database did not answer, or (`busy`) every connection of the pool
 * stayed in use. Nothing of the job ran.
 */
export class LockUnavailable extends Schema.TaggedError<LockUnavailable>()("LockUnavailable", {
  message: Schema.String,
  busy: Schema.Boolean
}) {}

/** Another replica holds the lab's sync lock now. */
export class LockBusy extends Schema.TaggedError<LockBusy>()("LockBusy", {}) {}

/**
 * Which replica works on a lab's git repository. `lock` takes the lab's lock until its scope closes, or fails at once
 * (LockBusy) while another replica holds it: a job waiting for a lock must hold neither one of the few job slots nor
 * a database connection. Replicas sharing a PostgreSQL database lock there (layers/PgLabLocks.ts); a single process
 * (the embedded database) has only its own workers, already one per lab.
 */
export class LabLocks extends Context.Tag("LabLocks")<
  LabLocks,
  {
    readonly lock: (labId: string) => Effect.Effect<void, LockBusy | LockUnavailable, Scope.Scope>
    /** `job` holding the lab's lock, or LockBusy at once while another replica holds it (a git job). */
    readonly tryExclusive: <A, E, R>(labId: string, job: Effect.Effect<A, E, R>) => Effect.Effect<A, E | LockBusy | LockUnavailable, R>
  }
>() {}

/** The service from its `lock`. */
export const fromLock = (lock: LabLocks["Type"]["lock"]): LabLocks["Type"] => ({
  lock,
  tryExclusive: (labId, job) => Effect.scoped(Effect.zipRight(lock(labId), job))
})

/** One process: its supervisor already runs one job per lab at a time. */
export const singleProcess = Layer.succeed(LabLocks, fromLock(() => Effect.void))

/** How often a waiting link change asks for a lock another replica holds. */
const WAIT_POLL = Schedule.spaced(Duration.millis(100))

/**
 * `job` holding the lab's lock, waiting (interruptibly) at most `within` while another replica holds it: then
 * LockBusy, and `job` never ran. Only the wait is timed: a job that started runs to its end. For a request that
 * must wait its turn, such as a link change.
 */
export const exclusiveWithin = <A, E, R>(
  locks: LabLocks["Type"],
  labId: string,
  job: Effect.Effect<A, E, R>,
  within: Duration.DurationInput
) =>
  Effect.scoped(
    Effect.zipRight(
      locks.lock(labId).pipe(
        Effect.retry({ schedule: WAIT_POLL, while: (e) => e instanceof LockBusy }),
        Effect.timeoutFail({ duration: within, onTimeout: () => new LockBusy() })
      ),
      job
    )
  )
