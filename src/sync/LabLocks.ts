import { Context, Effect, Layer, Schema } from "effect"

/** The lab's sync lock could not be taken: the database did not answer. */
export class LockUnavailable extends Schema.TaggedError<LockUnavailable>()("LockUnavailable", { message: Schema.String }) {}

/**
 * Which replica works on a lab's git repository. `exclusive` runs a git job (or a link change) while no other
 * replica runs one for the same lab: replicas sharing a PostgreSQL database take a lock there
 * (layers/PgLabLocks.ts); a single process (the embedded database) has only its own workers, already one per lab.
 */
export class LabLocks extends Context.Tag("LabLocks")<
  LabLocks,
  { readonly exclusive: <A, E, R>(labId: string, job: Effect.Effect<A, E, R>) => Effect.Effect<A, E | LockUnavailable, R> }
>() {}

/** One process: its supervisor already runs one job per lab at a time. */
export const singleProcess = Layer.succeed(LabLocks, { exclusive: (_labId, job) => job })
