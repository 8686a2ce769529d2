import { Duration, Effect, Layer } from "effect"

/** Long enough after start for the start-up's own work (migrations, the first sync jobs) to be done. */
const AFTER_START = Duration.seconds(10)

/**
 * One collection asked of V8 10 s after the server is up, when the process runs with `--expose-gc` (`npm start`
 * does). Start-up leaves V8's young generation at its largest (64 MiB semi-spaces under `--max-semi-space-size=64`)
 * and garbage in the old generation; V8 gives them back after a collection at a low allocation rate, which a quiet
 * service may not reach for many minutes (measured: still 178 MiB resident 60 s after start on PostgreSQL in some
 * runs, 109 in others). After this collection, resident memory was 111-116 MiB within seconds in every run; on PGlite
 * V8's own memory reducer followed within ~20 s. Without the flag nothing happens.
 */
const collectOnce = Layer.scopedDiscard(
  Effect.forkScoped(
    Effect.sleep(AFTER_START).pipe(Effect.zipRight(Effect.sync(() => globalThis.gc?.({ type: "major" }))))
  )
)

/** `server`, then the collection 10 s after it is built. */
export const afterStart = <E, R>(server: Layer.Layer<never, E, R>): Layer.Layer<never, E, R> => Layer.provide(collectOnce, server)
