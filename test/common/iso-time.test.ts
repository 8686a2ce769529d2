import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { isoString } from "../../src/common/IsoTime.js"

const EARLIEST = Date.parse("0001-01-01T00:00:00.000Z")
const LATEST = Date.parse("9999-12-31T23:59:59.999Z")

describe("isoString", () => {
  it("writes what toISOString writes, for any time from year 1 to 9999", () => {
    fc.assert(
      fc.property(fc.integer({ min: EARLIEST, max: LATEST }), (time) => {
        expect(isoString(new Date(time))).toBe(new Date(time).toISOString())
      }),
      { numRuns: 20_000 }
    )
  })

  it("writes the edges of days, months, leap days, centuries and the range alike", () => {
    const times = [
      "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2000-02-29T23:59:59.999Z", "2000-03-01T00:00:00.000Z",
      "2100-02-28T12:00:00.010Z", "2100-03-01T00:00:00.100Z", "2024-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z",
      "0001-01-01T00:00:00.000Z"
    ]
    for (const text of times) expect(isoString(new Date(text))).toBe(text)
    expect(isoString(new Date(LATEST + 1))).toBe("+010000-01-01T00:00:00.000Z")
  })

  it("throws on an invalid date, as toISOString does", () => {
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError)
  })
})
