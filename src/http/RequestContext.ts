import { Effect, FiberRef } from "effect"
import { randomBytes } from "node:crypto"

/** The id of the request being served, `req_<random>`, set by the global middleware. */
export const CurrentRequestId = FiberRef.unsafeMake("req_none")

export const newRequestId = (): string => `req_${randomBytes(12).toString("base64url")}`

export const requestId: Effect.Effect<string> = FiberRef.get(CurrentRequestId)
