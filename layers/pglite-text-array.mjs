// text[] parameters in PostgreSQL's binary array format, for the PGlite worker.
// PGlite writes an array parameter as an array literal: each element escaped by
// two regular expressions, then measured for UTF-8 by a JavaScript loop, then
// parsed again by array_in. For a sync's 2,000 files of text that was about 40 %
// of the statement. The binary form is a header and length-prefixed UTF-8, which
// PGlite binds as is (a Uint8Array parameter) and array_recv reads without parsing.

const TEXT_OID = 25

/** The binary text[] of a flat array of strings and nulls; undefined for anything else (the caller falls back). */
export const encodeTextArray = (items) => {
  if (!Array.isArray(items)) return undefined
  let size = 12
  let hasNull = 0
  for (const item of items) {
    if (item === null || item === undefined) {
      hasNull = 1
      size += 4
    } else if (typeof item === "string") {
      size += 4 + Buffer.byteLength(item, "utf8")
    } else {
      return undefined
    }
  }
  const ndim = items.length === 0 ? 0 : 1
  size += ndim * 8
  const out = Buffer.allocUnsafe(size)
  out.writeInt32BE(ndim, 0)
  out.writeInt32BE(hasNull, 4)
  out.writeInt32BE(TEXT_OID, 8)
  let pos = 12
  if (ndim === 1) {
    out.writeInt32BE(items.length, 12)
    out.writeInt32BE(1, 16) // lower bound
    pos = 20
  }
  for (const item of items) {
    if (item === null || item === undefined) {
      out.writeInt32BE(-1, pos)
      pos += 4
    } else {
      const length = out.write(item, pos + 4, "utf8")
      out.writeInt32BE(length, pos)
      pos += 4 + length
    }
  }
  return out
}
