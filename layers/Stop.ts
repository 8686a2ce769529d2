import { Effect, Layer } from "effect"
import { Readiness } from "../src/status/Readiness.js"

/** How a stop goes (README "Operating"): STOP_DRAIN_MS and STOP_REQUESTS_MS. */
export interface StopSettings {
  /** After SIGTERM, how long /readyz answers 503 while everything else is still served (for load balancers to notice). */
  readonly drainMillis: number
  /** Then how long requests in flight may take to finish before their connections are closed. */
  readonly requestsMillis: number
}

export const DEFAULT_STOP: StopSettings = { drainMillis: 0, requestsMillis: 10_000 }

/**
 * A stop's first step (finalizers run last-built first, and this is built last): /readyz turns 503, and for
 * `drainMillis` everything else is still served; then the server stops taking requests (NodeServer.ts).
 */
export const drainOnStop = (drainMillis: number) =>
  Layer.scopedDiscard(
    Effect.flatMap(Readiness, (readiness) =>
      Effect.addFinalizer(() =>
        Effect.zipRight(
          Effect.logInfo(`stopping: not ready; serving ${drainMillis} ms more, then finishing requests in flight`),
          Effect.zipRight(readiness.drain, Effect.sleep(drainMillis))
        )
      )
    )
  )
