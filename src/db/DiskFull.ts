import { Cause, Option, Predicate } from "effect"

/**
 * A write that failed for lack of space: PostgreSQL's disk_full (SQLSTATE 53100, on either database; PGlite's
 * PANIC over a WAL segment it could not write says the same), or ENOSPC from a file system (the git store, PGlite's
 * files). Found along an error's `cause` chain: a SqlError carries the driver's error, a GitError the system's.
 */
const DISK_FULL_CODES: ReadonlySet<unknown> = new Set(["53100", "ENOSPC"])

const field = (u: unknown, key: string): unknown => (Predicate.hasProperty(u, key) ? u[key] : undefined)

export const isDiskFull = (u: unknown): boolean => {
  let current = u
  // a cause chain is short; the bound keeps a cyclic one from looping
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (DISK_FULL_CODES.has(field(current, "code"))) return true
    current = field(current, "cause")
  }
  return false
}

/** Does any failure or defect of `cause` say the disk was full? */
export const causeIsDiskFull = (cause: Cause.Cause<unknown>): boolean =>
  Cause.reduce(cause, false, (found, part) =>
    found ? Option.some(true) : part._tag === "Fail" ? Option.some(isDiskFull(part.error)) : part._tag === "Die" ? Option.some(isDiskFull(part.defect)) : Option.none()
  )
