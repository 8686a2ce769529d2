import { createHash, timingSafeEqual } from "node:crypto"
import { randomToken } from "../common/Ids.js"

export const API_KEY_PREFIX = "lsk_"

export const newApiKeySecret = (): string => `${API_KEY_PREFIX}${randomToken(40)}`

export const sha256 = (value: string): Buffer => createHash("sha256").update(value).digest()

export const sha256Hex = (value: string): string => sha256(value).toString("hex")

/** Constant-time string equality (lengths are compared first: timingSafeEqual throws on a mismatch). */
export const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
