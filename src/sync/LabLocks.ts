import { Context, Duration, Effect, Layer, Schedule, Schema } from "effect"

/** The lab's sync lock could not be taken: the database did not answer. */
export class LockUnavailable extends Schema.TaggedError<LockUnavailable>()("LockUnavailable", { message: Schema.String }) {}

/** Another replica holds the lab's sync lock now. */
export class LockBusy extends Schema.TaggedError<LockBusy>()("LockBusy", {}) {}

/**
 * Which replica works on a lab's git repository. `tryExclusive` runs a git job (or a link change) holding the lab's
 * lock, or fails with LockBusy at once while another replica holds it: a job waiting for a lock must not hold one
 * of the few job slots or a database connection. Replicas sharing a PostgreSQL database lock there
 * (layers/PgLabLocks.ts); a single process (the embedded database) has only its own workers, already one per lab.
 */
export class LabLocks extends Context.Tag("LabLocks")<
  LabLocks,
  {
    readonly tryExclusive: <A, E, R>(
      labId: string,
      job: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | LockBusy | LockUnavailable, R>
  }
>() {}

/** One process: its supervisor already runs one job per lab at a time. */
export const singleProcess = Layer.succeed(LabLocks, { tryExclusive: (_labId, job) => job })

/** How often a waiting link change asks for a lock another replica holds. */
const WAIT_POLL = Schedule.spaced(Duration.millis(100))

/**
 * `job` holding the lab's lock, waiting (interruptibly) while another replica holds it, `within` at most: then
 * LockBusy. For a request that must wait its turn, such as a link change.
 */
export const exclusiveWithin = <A, E, R>(
  locks: LabLocks["Type"],
  labId: string,
  job: Effect.Effect<A, E, R>,
  within: Duration.DurationInput
) =>
  locks.tryExclusive(labId, job).pipe(
    Effect.retry({ schedule: WAIT_POLL, while: (e) => e instanceof LockBusy }),
    Effect.timeoutFail({ duration: within, onTimeout: () => new LockBusy() })
  )
