import { randomBytes } from "node:crypto"

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"

/** `n` random characters of [0-9a-z]. */
export const randomToken = (n: number): string => {
  const bytes = randomBytes(n)
  let out = ""
  for (const byte of bytes) out += ALPHABET[byte % 36]
  return out
}

/** Prefixed ids as the spec shows them: `lab_…`, `task_…`, `key_…`. */
export const newId = (prefix: string): string => `${prefix}_${randomToken(16)}`
