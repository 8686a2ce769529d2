/** A busy lab's push turns (PushPacing.ts): a burst at once, then one push per spacing; a quiet lab never waits. */
import { describe, expect, it } from "vitest"
import { PUSH_BURST, PUSH_SPACING_MILLIS, PushTurns } from "../../src/sync/PushPacing.js"

describe("push turns", () => {
  it("let a lab push PUSH_BURST times at once, then once per PUSH_SPACING_MILLIS, and give the burst back after a quiet spell", () => {
    const turns = new PushTurns()
    let now = 1_000_000
    for (let i = 0; i < PUSH_BURST; i++) {
      expect(turns.delay("busy", now)).toBe(0)
      turns.spend("busy", now)
      now += 100
    }
    // the next push waits for its turn, about one spacing after the burst began
    const wait = turns.delay("busy", now)
    expect(wait).toBeGreaterThan(PUSH_SPACING_MILLIS - 1_000)
    expect(wait).toBeLessThanOrEqual(PUSH_SPACING_MILLIS)
    now += wait
    expect(turns.delay("busy", now)).toBe(0)
    turns.spend("busy", now)
    expect(turns.delay("busy", now)).toBe(PUSH_SPACING_MILLIS)
    // another lab is not held by this one's turns
    expect(turns.delay("quiet", now)).toBe(0)
    // a lab that pushed nothing for a while pushes at once again
    now += PUSH_BURST * PUSH_SPACING_MILLIS
    for (let i = 0; i < PUSH_BURST; i++) {
      expect(turns.delay("busy", now)).toBe(0)
      turns.spend("busy", now)
    }
  })
})
