import { SqlError } from "@effect/sql/SqlError"

const codeOf = (error: SqlError): unknown =>
  typeof error.cause === "object" && error.cause !== null && "code" in error.cause ? error.cause.code : undefined

/** PostgreSQL's unique_violation (both drivers surface the SQLSTATE as `code`). */
export const isUniqueViolation = (error: unknown): error is SqlError =>
  error instanceof SqlError && codeOf(error) === "23505"
