/**
 * What any string or JSON value a client sends must satisfy, whichever edge it came through: no NUL and no lone
 * UTF-16 surrogate (PostgreSQL text refuses both), JSON nested at most MAX_JSON_DEPTH levels (deep JSON overflows
 * stacks), and no number JSON cannot hold (1e400). Each problem names the field.
 */

/** How deep a JSON body may nest, counting the body's own object or array as level 1. */
export const MAX_JSON_DEPTH = 64

// with the `u` flag a well-formed pair is one code point, so only a lone surrogate matches the range
const HOSTILE = /[\0\uD800-\uDFFF]/u

/** Why a string a client sent cannot be stored (NUL, a lone surrogate), or undefined. */
export const problemWith = (value: string): string | undefined => {
  const found = HOSTILE.exec(value)
  if (found === null) return undefined
  return found[0] === "\0" ? "must not contain NUL (\\u0000)" : "must not contain a lone UTF-16 surrogate (invalid Unicode)"
}

const MAX_SHOWN = 120

/** A name as it can be shown in a message: hostile characters escaped, long names cut. */
export const printable = (name: string): string => {
  const escaped = name.replace(/[\0-\x1f\uD800-\uDFFF]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
  return escaped.length > MAX_SHOWN ? `${escaped.slice(0, MAX_SHOWN)}…` : escaped
}

const ACTUAL = ", actual "
const MAX_MESSAGE = 400

/** A schema's message about a client's value, with the value it quotes cut: a 1 MB string is not sent back. */
export const shownIssue = (message: string): string => {
  const at = message.indexOf(ACTUAL)
  const end = at < 0 ? MAX_MESSAGE : at + ACTUAL.length + MAX_SHOWN
  return message.length > end ? `${message.slice(0, end)}… (cut, ${message.length - end} more characters)` : message
}

const fieldOf = (path: ReadonlyArray<string | number>): string => {
  if (path.length === 0) return "body"
  const joined = path.map((p) => (typeof p === "number" ? String(p) : printable(p))).join(".")
  return joined.length > MAX_SHOWN ? `${joined.slice(0, MAX_SHOWN)}…` : joined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The first problem of a parsed JSON value (or of the JSON at `under`): the field it is in, and what is wrong. */
export const jsonIssue = (
  body: unknown,
  under: ReadonlyArray<string> = []
): { readonly field: string; readonly problem: string } | undefined => {
  const path: Array<string | number> = [...under]
  const visit = (value: unknown, depth: number): { readonly field: string; readonly problem: string } | undefined => {
    if (typeof value === "string") {
      const problem = problemWith(value)
      return problem === undefined ? undefined : { field: fieldOf(path), problem }
    }
    if (typeof value === "number") return Number.isFinite(value) ? undefined : { field: fieldOf(path), problem: "number out of range" }
    if (typeof value !== "object" || value === null) return undefined
    if (depth > MAX_JSON_DEPTH) return { field: fieldOf(path), problem: `nested deeper than ${MAX_JSON_DEPTH} levels` }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i)
        const problem = visit(value[i], depth + 1)
        path.pop()
        if (problem !== undefined) return problem
      }
      return undefined
    }
    if (!isRecord(value)) return undefined
    for (const key of Object.keys(value)) {
      path.push(key)
      const keyProblem = problemWith(key)
      const problem = keyProblem === undefined ? visit(value[key], depth + 1) : { field: fieldOf(path), problem: `the field name ${keyProblem}` }
      path.pop()
      if (problem !== undefined) return problem
    }
    return undefined
  }
  return visit(body, 1)
}

/** The first problem of a parsed JSON body (or of the JSON at `under`), as a message naming the field, or undefined. */
export const jsonProblem = (body: unknown, under: ReadonlyArray<string> = []): string | undefined => {
  const issue = jsonIssue(body, under)
  return issue === undefined ? undefined : `${issue.field}: ${issue.problem}`
}
