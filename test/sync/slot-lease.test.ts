/**
 * The good pool's lease (src/sync/SlotLease.ts), in real time with one slot: a job whose host stalls gives its slot
 * up to a job that waits, and takes it back before handling what its host then sends; a job whose host streams fast
 * keeps its slot however long it runs; a stalled job with no one waiting keeps it too.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { DEFAULT_JOB_SLOTS, JobSlots, makeSlots } from "../../src/sync/JobSlots.js"
import { HostMeter } from "../../src/sync/Git.js"
import { inGoodSlot, PROGRESS_BYTES } from "../../src/sync/SlotLease.js"

const STALL_MILLIS = 300

const run = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.provideService(effect, JobSlots, { ...DEFAULT_JOB_SLOTS, jobs: 1, stallMillis: STALL_MILLIS }))

/** When each step of the jobs happened, in milliseconds from the start. */
const timeline = () => {
  const start = Date.now()
  const events: Array<string> = []
  return { events, note: (what: string) => Effect.sync(() => events.push(what)), at: () => Date.now() - start }
}

/** An exchange whose host sends nothing for `silentMillis`, then `bytes` at once, and ends. */
const stalledExchange = (silentMillis: number, bytes: number) =>
  Effect.flatMap(HostMeter, (meter) =>
    Effect.promise(async () => {
      const ended = meter.begin()
      await new Promise((resolve) => setTimeout(resolve, silentMillis))
      meter.moved(bytes)
      await meter.proceed(false)
      ended()
      await meter.proceed(true)
    })
  )

/** An exchange whose host sends PROGRESS_BYTES every 50 ms for `millis`. */
const streamingExchange = (millis: number) =>
  Effect.flatMap(HostMeter, (meter) =>
    Effect.promise(async () => {
      const ended = meter.begin()
      for (const until = Date.now() + millis; Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        meter.moved(PROGRESS_BYTES)
        await meter.proceed(false)
      }
      ended()
      await meter.proceed(true)
    })
  )

describe("the good pool's lease", () => {
  it("a job whose host stalls gives its slot to one waiting, and takes it back before going on", async () => {
    const t = timeline()
    await run(
      Effect.gen(function* () {
        const slots = yield* makeSlots
        const stalled = inGoodSlot(slots, Effect.zipRight(stalledExchange(1_200, 64 * 1024), t.note(`stalled job done`)))
        const other = inGoodSlot(slots, Effect.zipRight(Effect.sleep("600 millis"), t.note(`other job done`)))
        yield* Effect.all([stalled, Effect.zipRight(Effect.sleep("100 millis"), other)], { concurrency: "unbounded" })
      })
    )
    // the other job ran while the stalled one waited (after STALL_MILLIS), and the stalled one went on after it
    expect(t.events).toEqual(["other job done", "stalled job done"])
    expect(t.at()).toBeGreaterThanOrEqual(1_200)
    expect(t.at()).toBeLessThan(1_700)
  })

  it("a job whose host streams fast keeps its slot however long it runs; one stalled with no one waiting keeps it", async () => {
    const t = timeline()
    await run(
      Effect.gen(function* () {
        const slots = yield* makeSlots
        const streaming = inGoodSlot(slots, Effect.zipRight(streamingExchange(1_000), t.note("streaming job done")))
        const other = inGoodSlot(slots, t.note("other job done"))
        yield* Effect.all([streaming, Effect.zipRight(Effect.sleep("100 millis"), other)], { concurrency: "unbounded" })
        const alone = inGoodSlot(slots, Effect.zipRight(stalledExchange(600, 10), t.note("lone stalled job done")))
        yield* alone
        // and it gave the slot back at its end
        expect(yield* Effect.timeout(slots.jobs.withPermits(1)(Effect.succeed("free")), "100 millis")).toBe("free")
      })
    )
    expect(t.events).toEqual(["streaming job done", "other job done", "lone stalled job done"])
  })
})
