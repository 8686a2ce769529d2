import { hash, timingSafeEqual } from "node:crypto"
import { randomToken } from "../common/Ids.js"

export const API_KEY_PREFIX = "lsk_"

export const newApiKeySecret = (): string => `${API_KEY_PREFIX}${randomToken(40)}`

/** One-shot: every request with a credential hashes it, and a Hash object per call costs more than the digest. */
export const sha256 = (value: string): Buffer => hash("sha256", value, "buffer")

export const sha256Hex = (value: string): string => sha256(value).toString("hex")

/** Constant-time string equality (lengths are compared first: timingSafeEqual throws on a mismatch). */
export const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
