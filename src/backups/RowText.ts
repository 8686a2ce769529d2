/**
 * A row of the archive as row_to_json wrote it (one object, no whitespace between its tokens), read at its top level
 * only: the spans of its values, without parsing them (JSON.parse would round numbers beyond 2^53 and rewrite the
 * rest). Used to check a row against the schema without sending its long texts (RestoreCheck.ts).
 */

/** The index after the string starting at `at` (its opening quote). */
const afterString = (row: string, at: number) => {
  let from = at + 1
  for (;;) {
    const quote = row.indexOf('"', from)
    if (quote < 0) return row.length
    let slashes = 0
    while (row.charCodeAt(quote - 1 - slashes) === 92) slashes++
    if (slashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** The index after the value starting at `at`: a string, an object or array (nested), or a literal. */
const afterValue = (row: string, at: number) => {
  const first = row[at]
  if (first === '"') return afterString(row, at)
  if (first === "{" || first === "[") {
    let depth = 0
    let i = at
    while (i < row.length) {
      const c = row[i]
      if (c === '"') {
        i = afterString(row, i)
        continue
      }
      if (c === "{" || c === "[") depth++
      else if (c === "}" || c === "]") {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return row.length
  }
  let i = at
  while (i < row.length && row[i] !== "," && row[i] !== "}") i++
  return i
}

/** A row with its long strings taken out: the row with "" in their place, and each one's text by column. */
export interface SplitRow {
  readonly row: string
  readonly strings: ReadonlyMap<string, string>
}

/**
 * The row with the string values of `columns` longer than `max` characters written as "", the rest as it was; the
 * row unchanged when it is not laid out as row_to_json writes (nothing is guessed).
 */
export const withoutLongStrings = (row: string, columns: ReadonlySet<string>, max: number): string =>
  splitLongStrings(row, columns, max, false).row

/** As withoutLongStrings, with the strings taken out (decoded) when `keep`. */
export const splitLongStrings = (row: string, columns: ReadonlySet<string>, max: number, keep = true): SplitRow => {
  const strings = new Map<string, string>()
  const unchanged = { row, strings: new Map<string, string>() }
  if (columns.size === 0 || row.length <= max || row[0] !== "{") return unchanged
  const parts: Array<string> = []
  let copied = 0
  let i = 1
  while (i < row.length && row[i] !== "}") {
    if (row[i] === ",") i++
    if (row[i] !== '"') return unchanged
    const keyEnd = afterString(row, i)
    if (row[keyEnd] !== ":") return unchanged
    const key: unknown = JSON.parse(row.slice(i, keyEnd))
    const valueAt = keyEnd + 1
    const valueEnd = afterValue(row, valueAt)
    if (typeof key === "string" && columns.has(key) && row[valueAt] === '"' && valueEnd - valueAt > max) {
      const text: unknown = keep ? JSON.parse(row.slice(valueAt, valueEnd)) : ""
      if (typeof text !== "string") return unchanged
      strings.set(key, text)
      parts.push(row.slice(copied, valueAt), '""')
      copied = valueEnd
    }
    i = valueEnd
  }
  if (i !== row.length - 1 || copied === 0) return unchanged
  parts.push(row.slice(copied))
  return { row: parts.join(""), strings }
}
