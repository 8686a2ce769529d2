import type { DomainError } from "../common/DomainErrors.js"
import { errorCodeOf } from "../common/ErrorCodes.js"

/** About what an agent's context should take from one tool result; longer ones are cut, saying so. */
export const MAX_RESULT_CHARS = 25_000

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Cut an answer over MAX_RESULT_CHARS: a page keeps the items that fit (and says to ask again with that limit); anything
 * else has its longest text field cut. Either way the answer says what was cut and how to ask for less.
 */
const bounded = (answer: Record<string, unknown>, total: number): Record<string, unknown> => {
  const size = (v: unknown) => JSON.stringify(v).length
  const items = answer["items"]
  if (Array.isArray(items)) {
    let kept = items.length
    while (kept > 1 && size({ ...answer, items: items.slice(0, kept) }) > MAX_RESULT_CHARS) kept = Math.ceil(kept / 2)
    if (kept < items.length) {
      return {
        ...answer,
        items: items.slice(0, kept),
        nextCursor: null,
        truncated: `only the first ${kept} of ${items.length} items fit in one result (${total} characters): ask again with limit ${kept}, or narrow the request`
      }
    }
  }
  const longest = Object.entries(answer)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string")
    .sort((a, b) => b[1].length - a[1].length)[0]
  if (longest === undefined) return { truncated: `the result has ${total} characters, over ${MAX_RESULT_CHARS}: narrow the request` }
  const [field, text] = longest
  const keep = Math.max(0, text.length - (total - MAX_RESULT_CHARS) - 400)
  return {
    ...answer,
    [field]: text.slice(0, keep),
    truncated: `${field} was cut after ${keep} of ${text.length} characters to fit one result; the rest is not shown (read a smaller part, or search for what you need)`
  }
}

/**
 * A tool's JSON answer as MCP carries it: as structuredContent and the same JSON as text (answers that are not objects
 * are wrapped as `{result}`), cut when too long.
 */
export const toolSuccess = (answer: unknown) => {
  const whole = isRecord(answer) ? answer : { result: answer }
  const text = JSON.stringify(whole)
  const structured = text.length <= MAX_RESULT_CHARS ? whole : bounded(whole, text.length)
  return {
    content: [{ type: "text" as const, text: structured === whole ? text : JSON.stringify(structured) }],
    structuredContent: structured,
    isError: false
  }
}

/** A failure the client can cause, as a tool result: the REST envelope, with when to retry for a rate limit. */
export const toolFailure = (error: DomainError) => {
  const { code, status } = errorCodeOf(error)
  const envelope = {
    error: { code, status, message: error.message, ...(error._tag === "OverRateLimit" ? { retryAfter: error.retryAfter } : {}) }
  }
  return { content: [{ type: "text" as const, text: JSON.stringify(envelope) }], structuredContent: envelope, isError: true }
}
