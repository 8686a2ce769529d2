import { Effect, FiberRef } from "effect"

/**
 * Marks database work that can wait (the search indexer). Where statements
 * queue for one session (embedded PGlite), waiting requests go first; on
 * PostgreSQL the pool serves everyone at once and this changes nothing.
 */
export const BackgroundWork = FiberRef.unsafeMake(false)

export const inBackground = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.locally(effect, BackgroundWork, true)

/**
 * Marks work whose single statements may legitimately run for minutes (the migrations at start-up over a big
 * embedded database, a backup's restore): embedded PGlite's stall watchdog (layers/PgliteWorker.ts) does not end its
 * thread while such a statement is waiting, since a long statement and a stuck thread look alike from outside.
 */
export const LongStatements = FiberRef.unsafeMake(false)

export const allowingLongStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.locally(effect, LongStatements, true)
