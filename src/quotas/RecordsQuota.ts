import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/*
 * The records quota: rows a lab holds across its resources (the tables listed in migration 10), counted in
 * `lab_usage.records` by statement triggers in the writing transaction, which refuse a statement that takes a lab
 * over its plan's `plan_limits.records` (written at start from QUOTA_RECORDS) with SQLSTATE RECORDS_QUOTA_SQLSTATE.
 * Enforced in the database, so every way of creating a row (every route, a batch, a background job) meets it.
 */

/** A code of the class PostgreSQL leaves to applications. */
export const RECORDS_QUOTA_SQLSTATE = "LQ403"

/** The trigger's refusal, with its message (which names the plan, the lab and the limit). */
export const recordsQuotaMessage = (error: unknown): string | undefined => {
  if (!(error instanceof SqlError) || typeof error.cause !== "object" || error.cause === null) return undefined
  const cause = error.cause
  if (!("code" in cause) || cause.code !== RECORDS_QUOTA_SQLSTATE) return undefined
  return "message" in cause && typeof cause.message === "string" ? cause.message : "quota exceeded: records"
}

/** The setting countedNotRefused turns on, for a caller that sets it within a statement of its own. */
export const COUNTED_NOT_REFUSED = "lab_service.pull"

/**
 * For the rest of the caller's transaction, rows it creates are counted but never refused: what the service writes
 * by itself (a sync's pull, the compute cost of an experiment ending on a pod) must not fail because a lab is full.
 * The setting is the one migration 10's trigger reads (named after the first job that needed it).
 */
export const countedNotRefused = (sql: SqlClient.SqlClient) =>
  Effect.orDie(Effect.asVoid(sql`SELECT set_config(${COUNTED_NOT_REFUSED}, 'on', true)`))
