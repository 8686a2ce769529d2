import { Duration, Effect, Schedule } from "effect"
import type { SyncRepo } from "./SyncRepo.js"

/** Work waiting longer than this is looked for every SWEEP_EVERY, and its lab's worker started. */
const SWEEP_AFTER_SECONDS = 10
const SWEEP_EVERY = Duration.seconds(10)

interface Asks {
  readonly stopping: Effect.Effect<boolean>
  readonly push: (labId: string) => Effect.Effect<boolean>
  readonly pull: (labId: string) => Effect.Effect<boolean>
}

/**
 * What a replica that died left undone, taken over by the others (README "Replicas"): writes it acknowledged and
 * did not push, pulls a webhook asked it for. Each replica looks every SWEEP_EVERY; the labs' locks keep two replicas
 * from working a lab at once, and a lab whose worker already runs is only flagged.
 */
export const sweep = (repo: SyncRepo, asks: Asks) =>
  Effect.gen(function* () {
    if (yield* asks.stopping) return
    for (const labId of yield* repo.labsWaiting(SWEEP_AFTER_SECONDS)) yield* asks.push(labId)
    for (const labId of yield* repo.labsWantingPull(SWEEP_AFTER_SECONDS)) yield* asks.pull(labId)
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("the sweep for waiting sync work failed", cause)),
    Effect.repeat(Schedule.spaced(SWEEP_EVERY)),
    Effect.delay(SWEEP_EVERY)
  )
