import { Effect, FiberRef } from "effect"

/**
 * Marks database work that can wait (the search indexer). Where statements
 * queue for one session (embedded PGlite), waiting requests go first; on
 * PostgreSQL the pool serves everyone at once and this changes nothing.
 */
export const BackgroundWork = FiberRef.unsafeMake(false)

export const inBackground = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.locally(effect, BackgroundWork, true)
