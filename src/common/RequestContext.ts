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

/**
 * Rate windows counted while a request is served, beside the credential's (a
 * lab's budget, a lab's forced syncs, a webhook sender's failures): the global
 * middleware reports the one that binds. Made fresh for each request.
 */
export interface CountedWindows {
  /** Labs whose budget this request was already charged to (once per lab per request). */
  readonly labs: Set<string>
  readonly decisions: Array<RateDecision>
}

/** The request being served, whichever edge it came through, set once by that edge for everything downstream. */
export interface RequestContext {
  /** `req_<id>`, also sent as X-Request-Id. */
  readonly id: string
  readonly identity: Identified
  /** Absent outside a request (a background fiber): nothing is reported then. */
  readonly counted?: CountedWindows
}

export const CurrentRequest = FiberRef.unsafeMake<RequestContext>({ id: "req_none", identity: Either.right(Option.none()) })

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

/** Report a window counted for this request, so its headers (and Retry-After) can describe it. */
export const reportWindow = (decision: RateDecision): Effect.Effect<void> =>
  Effect.map(FiberRef.get(CurrentRequest), (request) => {
    request.counted?.decisions.push(decision)
  })
