import { Effect, FiberRef } from "effect"
import { randomBytes } from "node:crypto"

/** The id of the request being served, `req_<random>`, set by the global middleware. */
export const CurrentRequestId = FiberRef.unsafeMake("req_none")

// a random prefix per process and a counter: unique across replicas, and cheap on the hot path
const processPrefix = randomBytes(6).toString("base64url")
let counter = 0

export const newRequestId = (): string => `req_${processPrefix}${(counter++).toString(36).padStart(6, "0")}`

export const requestId: Effect.Effect<string> = FiberRef.get(CurrentRequestId)
