import type { Step } from "./Step.js"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect, FiberRef } from "effect"
import { CurrentRequest } from "../../common/RequestContext.js"
import { DatabaseUnavailable } from "../../db/ConnectionLoss.js"
import { causeIsDiskFull } from "../../db/DiskFull.js"
import { restoreGateMessage } from "../../db/RestoreGate.js"
import { recordsQuotaMessage } from "../../quotas/RecordsQuota.js"
import type { DiskSpaceService } from "../../status/DiskSpace.js"
import { type ErrorTag, errorBody, isApiError } from "../Errors.js"
import type { RouteTable } from "../RouteTable.js"
import { shownIssue } from "../../common/TextHygiene.js"

export const errorResponse = (tag: ErrorTag, message: string, headers: Record<string, string> = {}) => {
  const body = errorBody(tag, message)
  return HttpServerResponse.unsafeJson(body, { status: body.error.status, headers })
}

/** Seconds a client is told to wait after the database connection was lost (the pool reconnects in milliseconds). */
const DATABASE_RETRY_AFTER_SECONDS = 1

const databaseUnavailable = (error: DatabaseUnavailable) => {
  // a pool that is busy is not a lost connection: the client is told which, and what it means for its change
  const what = error.busy === true ? "the database is busy (every connection stayed in use)" : "the database connection was lost"
  return errorResponse(
    "ServiceUnavailable",
    error.mayHaveLanded
      ? `${what} while the change was being saved: it may or may not have been applied; check before sending it again`
      : `${what}; nothing was changed: retry`,
    { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) }
  )
}

/** A request that failed on a full disk (53100, ENOSPC): the disk's to fix, not the client's request. */
const diskFull = errorResponse(
  "InsufficientStorage",
  "the disk is full: the request could not be completed; send it again once space is freed (GET /readyz says when)"
)

const decodeMessage = (error: HttpApiError.HttpApiDecodeError): string => {
  // an optional field reports its own failure and then "Expected undefined": keep the first
  const relevant = error.issues.filter((issue) => !issue.message.startsWith("Expected undefined"))
  const parts = relevant.map((issue) => {
    const field = issue.path.map(String).join(".")
    if (issue.message === "is missing") return `${field} is required`
    if (issue._tag === "Unexpected" && field) return `${field} is not a known field`
    const message = shownIssue(issue.message)
    return field ? `${field}: ${message}` : message
  })
  return parts.length > 0 ? parts.join("; ") : error.message
}

const internalError = (message: string, cause: Cause.Cause<unknown>) =>
  Effect.flatMap(FiberRef.get(CurrentRequest), ({ id }) =>
    Effect.as(Effect.logError(message, cause, { request_id: id }), errorResponse("ServerError", `internal error; quote ${id} when reporting it`))
  )

/**
 * Every failure becomes the error envelope: declared errors keep their code,
 * request decoding is 422, unknown routes 404, wrong methods 405, and defects
 * 500 with nothing internal in the body (the cause is logged with the request id).
 */
const toErrorResponse = (routes: RouteTable, disk: DiskSpaceService | undefined) => (cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
  const failure = Cause.squash(cause)
  if (isApiError(failure)) return Effect.succeed(errorResponse(failure._tag, failure.message))
  if (failure instanceof DatabaseUnavailable) return Effect.succeed(databaseUnavailable(failure))
  if (disk !== undefined && causeIsDiskFull(cause)) return Effect.as(disk.reportFull, diskFull)
  const overRecords = recordsQuotaMessage(failure)
  if (overRecords !== undefined) return Effect.succeed(errorResponse("QuotaExceeded", overRecords))
  const restoring = restoreGateMessage(failure)
  if (restoring !== undefined) return Effect.succeed(errorResponse("Conflict", restoring))
  if (failure instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(errorResponse("ValidationError", decodeMessage(failure)))
  if (HttpServerError.isServerError(failure)) {
    if (failure._tag === "RouteNotFound") {
      const request = failure.request
      const allowed = routes.methodsFor(request.url)
      return Effect.succeed(
        allowed.length > 0
          ? errorResponse("MethodNotAllowed", `${request.method} is not allowed here; use ${allowed.join(", ")}`, {
              allow: allowed.join(", ")
            })
          : errorResponse("NotFound", `no route for ${request.method} ${request.url.split("?")[0]}`)
      )
    }
    if (failure._tag === "RequestError" && failure.reason === "Decode") {
      return Effect.succeed(errorResponse("ValidationError", "the request body is not valid JSON"))
    }
  }
  return internalError("request failed with a defect", cause)
}

/**
 * What the route (or a step inside this one) failed with, as the error envelope. `disk`: a full disk is reported to
 * the disk watch and answered 507; without it (the probes), a disk-full failure is a defect like any other.
 */
export const answerErrors =
  (routes: RouteTable, disk?: DiskSpaceService): Step<never> =>
  (app) =>
    Effect.catchAllCause(app, toErrorResponse(routes, disk))

/**
 * What failed before the request was routed (its credential or its count could not be read): a lost database 503,
 * a full disk 507, anything else a 500 with the request id.
 */
export const answerFailuresBeforeRouting =
  (disk: DiskSpaceService): Step<never> =>
  (app) =>
    Effect.catchAllCause(app, (cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
      const failure = Cause.squash(cause)
      if (failure instanceof DatabaseUnavailable) return Effect.succeed(databaseUnavailable(failure))
      if (causeIsDiskFull(cause)) return Effect.as(disk.reportFull, diskFull)
      return internalError("request failed before routing", cause)
    })
