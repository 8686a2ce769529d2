/**
 * Read a few string fields of a JSON document without parsing it: a lexical
 * scan that builds no objects and decodes only the string literals found at the
 * wanted key paths. The webhook receiver uses it to find which labs a delivery
 * names before it has verified the signature, so an unsigned body costs one
 * linear pass over its text and nothing more.
 */

/** Key paths from the top-level object, such as ["repository", "full_name"]. */
export type KeyPath = ReadonlyArray<string>

export interface ScanResult {
  /** For each wanted path (joined by "/"), the non-empty strings found there, in document order. */
  readonly values: ReadonlyMap<string, ReadonlyArray<string>>
  /** The text is one top-level object that closed properly (it may still not be valid JSON in every detail). */
  readonly object: boolean
}

/** Containers nested deeper than this end the scan: no webhook payload comes near. */
export const MAX_DEPTH = 256
/** Longer literals at a wanted path are left undecoded (a URL or `owner/name` is far shorter). */
export const MAX_LITERAL = 2048
/** At most this many values are kept per path (a document repeating a key names several candidates). */
export const MAX_VALUES = 4

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OBJECT = 0
const ARRAY = 1

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
const endsScalar = (c: number) => c === 0x2c || c === 0x7d || c === 0x5d || c === 0x3a || c === QUOTE || isSpace(c)

/** The index of the quote that closes the string opening at `start`, or -1. */
const closingQuote = (text: string, start: number): number => {
  let from = start + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    if (quote < 0) return -1
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1
    if (backslashes % 2 === 0) return quote
    from = quote + 1
  }
}

/** The value of the literal text[start..end] (quotes included), if it is short and well formed. */
const literal = (text: string, start: number, end: number, max: number): string | undefined => {
  if (end - start - 1 > max) return undefined
  const raw = text.slice(start, end + 1)
  if (raw.indexOf("\\") < 0) return raw.slice(1, -1)
  try {
    const value: unknown = JSON.parse(raw)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

export const scanJsonStrings = (text: string, paths: ReadonlyArray<KeyPath>): ScanResult => {
  const wanted = new Set(paths.map((p) => p.join("/")))
  const deepest = Math.max(0, ...paths.map((p) => p.length))
  const values = new Map<string, Array<string>>()
  const result = (object: boolean): ScanResult => ({ values, object })

  const kinds: Array<number> = []
  // the current key of each open object (undefined in arrays, or when not worth decoding)
  const keys: Array<string | undefined> = []
  let arrays = 0
  let expectKey = false
  let i = 0
  const n = text.length
  while (i < n && isSpace(text.charCodeAt(i))) i += 1
  if (text.charCodeAt(i) !== 0x7b) return result(false)

  while (i < n) {
    const c = text.charCodeAt(i)
    if (isSpace(c) || c === 0x3a) {
      i += 1
    } else if (c === 0x7b || c === 0x5b) {
      if (kinds.length >= MAX_DEPTH) return result(false)
      kinds.push(c === 0x7b ? OBJECT : ARRAY)
      keys.push(undefined)
      if (c === 0x5b) arrays += 1
      expectKey = c === 0x7b
      i += 1
    } else if (c === 0x7d || c === 0x5d) {
      const kind = kinds.pop()
      keys.pop()
      if (kind === undefined || kind !== (c === 0x7d ? OBJECT : ARRAY)) return result(false)
      if (kind === ARRAY) arrays -= 1
      expectKey = false
      i += 1
      if (kinds.length === 0) {
        while (i < n && isSpace(text.charCodeAt(i))) i += 1
        return result(i === n)
      }
    } else if (c === 0x2c) {
      expectKey = kinds[kinds.length - 1] === OBJECT
      i += 1
    } else if (c === QUOTE) {
      const end = closingQuote(text, i)
      if (end < 0) return result(false)
      // only plain object paths no deeper than the deepest wanted one are followed
      const tracked = arrays === 0 && kinds.length <= deepest
      const top = kinds.length - 1
      if (expectKey && kinds[top] === OBJECT) {
        keys[top] = tracked ? literal(text, i, end, MAX_LITERAL) : undefined
        expectKey = false
      } else if (tracked && keys.every((k) => k !== undefined)) {
        const path = keys.join("/")
        if (wanted.has(path)) {
          const value = literal(text, i, end, MAX_LITERAL)
          const found = values.get(path) ?? []
          if (value !== undefined && value !== "" && found.length < MAX_VALUES) values.set(path, [...found, value])
        }
      }
      i = end + 1
    } else {
      // a number, true, false or null
      const start = i
      while (i < n && !endsScalar(text.charCodeAt(i)) && text.charCodeAt(i) !== 0x7b && text.charCodeAt(i) !== 0x5b) i += 1
      if (i === start) return result(false)
    }
  }
  return result(false)
}
