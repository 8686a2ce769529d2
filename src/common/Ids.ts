import { randomBytes } from "node:crypto"

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"

/** `n` random characters of [0-9a-z]. */
export const randomToken = (n: number): string => {
  const bytes = randomBytes(n)
  let out = ""
  for (const byte of bytes) out += ALPHABET[byte % 36]
  return out
}

let lastMillis = 0
let counter = 0

/**
 * Prefixed ids as the spec shows them: `lab_…`, `task_…`, `key_…`; 16 characters
 * of [0-9a-z] after the prefix. They sort by creation: 9 characters of time
 * (milliseconds), 2 of a per-millisecond counter, 5 random. Lists order by
 * (created_at, id), so rows made in the same millisecond keep their order.
 */
export const newId = (prefix: string): string => {
  const now = Date.now()
  counter = now === lastMillis ? counter + 1 : 0
  lastMillis = now
  return `${prefix}_${now.toString(36).padStart(9, "0")}${(counter % 1296).toString(36).padStart(2, "0")}${randomToken(5)}`
}
