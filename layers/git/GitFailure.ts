import { Errors } from "isomorphic-git"
import { CeilingExceeded, PackError } from "./PackFormat.js"
import { statusFailure, TransportError } from "./Transport.js"

/** An object the lab's store should hold is not there (GitDisk.ts then drops the store before the next fetch). */
export const STORE_INCOMPLETE =
  "the lab's git store lacks an object the commit needs (the host's pack was incomplete, or the store was damaged); the next attempt fetches the branch again from scratch"

/** An object of the lab's store cannot be read (a damaged file). */
export const STORE_DAMAGED = "the lab's git store is damaged; the next attempt fetches it again from scratch"

/**
 * What a failed fetch or push says: the HTTP status and a fixed description,
 * never what the remote sent (isomorphic-git's errors quote bodies and reason
 * phrases; those stay out of messages, the sync status and the log).
 */
export const describeFailure = (cause: unknown): string => {
  if (cause instanceof TransportError || cause instanceof CeilingExceeded || cause instanceof PackError) return cause.message
  if (cause instanceof Errors.HttpError) return statusFailure(cause.data.statusCode).message
  if (cause instanceof Errors.PushRejectedError) return "the remote branch moved (not a fast-forward)"
  if (cause instanceof Errors.GitPushError) return "the git host refused the update"
  if (cause instanceof Errors.SmartHttpError || cause instanceof Errors.ParseError || cause instanceof Errors.RemoteCapabilityError) {
    return "the git host's answer is not git's smart HTTP protocol"
  }
  if (cause instanceof Errors.NotFoundError) return STORE_INCOMPLETE
  // errors of the local store (a full disk, say) carry a code, never remote content
  const code = cause instanceof Error && "code" in cause && typeof cause.code === "string" && /^E[A-Z]+$/.test(cause.code) ? cause.code : undefined
  return code ? `the lab's git store failed (${code})` : "the git operation failed"
}
