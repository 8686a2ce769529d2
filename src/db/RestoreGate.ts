import { SqlError } from "@effect/sql/SqlError"
import { Cause, Option } from "effect"

/*
 * The restore gate (migration 15): while a restore puts a lab back in steps, statements writing the lab's rows of the
 * tables it replaces are refused with RESTORE_GATE_SQLSTATE, whatever route or job made them; the HTTP edge answers
 * 409 conflict with the trigger's message (which names the lab and the backup).
 */

/** A code of the class PostgreSQL leaves to applications. */
export const RESTORE_GATE_SQLSTATE = "LR409"

/** The gate's refusal, with its message; undefined for any other error. */
export const restoreGateMessage = (error: unknown): string | undefined => {
  if (!(error instanceof SqlError) || typeof error.cause !== "object" || error.cause === null) return undefined
  const cause = error.cause
  if (!("code" in cause) || cause.code !== RESTORE_GATE_SQLSTATE) return undefined
  return "message" in cause && typeof cause.message === "string" ? cause.message : "the lab is being restored; retry when the restore has ended"
}

/** Was any failure or defect of `cause` the gate's refusal? Background jobs then try again later, quietly. */
export const causeIsRestoring = (cause: Cause.Cause<unknown>): boolean =>
  Cause.reduce(cause, false, (found, part) =>
    found
      ? Option.some(true)
      : part._tag === "Fail"
        ? Option.some(restoreGateMessage(part.error) !== undefined)
        : part._tag === "Die"
          ? Option.some(restoreGateMessage(part.defect) !== undefined)
          : Option.none()
  )
