/**
 * timestamptz as pg returns it by default (postgres-date), faster for the text
 * PostgreSQL sends in a UTC session: `YYYY-MM-DD HH:MM:SS[.ffffff]+00`. Lists
 * carry two timestamps a row, and the general parser (regular expressions, a
 * time-zone pass) costs more than the rest of a row; anything else goes to it.
 */
export const parseTimestamptz =
  (general: (value: string) => unknown) =>
  (value: string): unknown => {
    const length = value.length
    if (length < 22 || !value.endsWith("+00") || value.charCodeAt(10) !== 32 /* space */) return general(value)
    const year = digits(value, 0, 4)
    const month = digits(value, 5, 2)
    const day = digits(value, 8, 2)
    const hour = digits(value, 11, 2)
    const minute = digits(value, 14, 2)
    const second = digits(value, 17, 2)
    if (
      year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 ||
      value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45 || value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58
    ) {
      return general(value)
    }
    let millis = 0
    if (length > 22) {
      // a fraction: `.` and 1 to 6 digits, read as postgres-date reads it (1000 × parseFloat, then truncated by Date.UTC)
      if (value.charCodeAt(19) !== 46 || length > 29 || digits(value, 20, length - 23) < 0) return general(value)
      millis = 1000 * parseFloat(value.slice(19, length - 3))
    }
    return new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis))
  }

/** The number in `value` at [start, start + count), or -1 if any of it is not a digit. */
const digits = (value: string, start: number, count: number): number => {
  let n = 0
  for (let i = start; i < start + count; i++) {
    const d = value.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}
