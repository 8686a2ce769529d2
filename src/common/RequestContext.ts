import { Effect, Either, FiberRef, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { Principal } from "../auth/Principal.js"
import type { RateDecision } from "../ratelimit/RateLimits.js"
import type { NotAuthenticated } from "./DomainErrors.js"

/**
 * What the Authorization header proved: a principal, no credential at all
 * (`None`), or a credential that failed.
 */
export type Identified = Either.Either<Option.Option<Principal>, NotAuthenticated>

/** A rate window a request was counted in besides its credential's (a lab's budget, …), under the account counted. */
export interface CountedWindow {
  readonly account: string
  readonly decision: RateDecision
}

/** The request being served, whichever edge it came through, set by that edge for everything downstream. */
export interface RequestContext {
  /** `req_<id>`, also sent as X-Request-Id. */
  readonly id: string
  readonly identity: Identified
  /**
   * The windows the request was counted in so far besides its credential's, as the edge and the services recorded them
   * (reportWindow): the answer states the one that binds. None outside a request.
   */
  readonly windows: ReadonlyArray<CountedWindow>
}

export const CurrentRequest = FiberRef.unsafeMake<RequestContext>({ id: "req_none", identity: Either.right(Option.none()), windows: [] })

/** Random bytes of an id: 96 bits, so ids never repeat and say nothing of how many requests an instance served. */
const ID_BYTES = 12
/** Ids drawn from the system's generator at once: one call per 256 requests instead of one per request. */
const POOL_IDS = 256
let pool = Buffer.alloc(0)
let used = 0

export const newRequestId = (): string => {
  if (used + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * POOL_IDS)
    used = 0
  }
  const id = pool.toString("base64url", used, used + ID_BYTES)
  used += ID_BYTES
  return `req_${id}`
}

export const requestId: Effect.Effect<string> = Effect.map(FiberRef.get(CurrentRequest), (request) => request.id)

/** Record a window this request was counted in, so the answer's headers (and Retry-After) can state it. */
export const reportWindow = (window: CountedWindow): Effect.Effect<void> =>
  FiberRef.update(CurrentRequest, (request) => ({ ...request, windows: [...request.windows, window] }))

/**
 * Count the request with `count`, given the windows it was counted in so far (a request run again after a lost
 * connection was counted already), and record the window it answers, if any.
 */
export const countedOnce = <A extends { readonly window: Option.Option<CountedWindow> }, E, R>(
  count: (counted: ReadonlyArray<CountedWindow>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(CurrentRequest), (request) =>
    Effect.tap(count(request.windows), (counted) => (Option.isSome(counted.window) ? reportWindow(counted.window.value) : Effect.void))
  )
