import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { httpSync } from "../support/HttpDriver.js"
import { useFixture } from "../support/LabFixture.js"
import { memorySync } from "../support/MemoryDriver.js"
import { play } from "../support/SyncModel.js"
import { stepArbitrary } from "../support/SyncSteps.js"

/**
 * Issue 11, "Done means": generated interleavings of API writes and deletes, outside pushes, webhooks, forced
 * syncs, outbox drains and faults (host down, a push that fails, a push whose answer is lost after the branch moved,
 * a pull or a push paused while the API writes), then the invariants a user checks once all is quiet (test/support/SyncModel.ts).
 * SYNC_MODEL_SEED replays a run; SYNC_MODEL_RUNS sets how many sequences; a failure prints the shrunk sequence.
 */
const seed = Number(process.env["SYNC_MODEL_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const runs = Number(process.env["SYNC_MODEL_RUNS"] ?? 100)
const replayPath = process.env["SYNC_MODEL_PATH"]

describe("model-based sync on in-memory git", () => {
  let sync: ReturnType<typeof memorySync>
  useFixture(async () => memorySync(), (started) => (sync = started))

  it("every interleaving converges: acknowledged writes in the repository once each, the lab equal to it under the rules", { timeout: 600_000 }, async () => {
    console.log(`sync model (in-memory git): seed ${seed}, ${runs} runs; replay with SYNC_MODEL_SEED=${seed}`)
    let steps = 0
    let sequences = 0
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary(["down", "pushFails", "pushLost"]), { minLength: 1, maxLength: 40, size: "max" }), async (sequence) => {
        steps += sequence.length
        sequences++
        const { model, driver } = await sync.newLab()
        const problems = await play(model, driver, sequence, false)
        if (problems.length > 0) throw new Error(`the sync diverged (SYNC_MODEL_SEED=${seed}):\n${problems.join("\n")}`)
      }),
      { seed, numRuns: runs, ...(replayPath === undefined ? {} : { path: replayPath }) }
    )
    console.log(`sync model (in-memory git): ${sequences} sequences, ${steps} steps; faults and pauses that took effect:`, sync.stats)
    if (replayPath === undefined && runs >= 100) expect(steps).toBeGreaterThanOrEqual(1_000)
  })
})

describe("model-based sync against the running server and a real git host", () => {
  const realRuns = Number(process.env["SYNC_MODEL_REAL_RUNS"] ?? 5)
  let sync: Awaited<ReturnType<typeof httpSync>>
  useFixture(httpSync, (started) => (sync = started), 120_000)

  it("every interleaving converges over HTTP", { timeout: 600_000 }, async () => {
    console.log(`sync model (real git): seed ${seed}, ${realRuns} runs; replay with SYNC_MODEL_SEED=${seed}`)
    let steps = 0
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary(["down", "pushFails", "pushLost"]), { minLength: 1, maxLength: 12, size: "max" }), async (sequence) => {
        steps += sequence.length
        const { model, driver } = await sync.newLab()
        const problems = await play(model, driver, sequence, true)
        if (problems.length > 0) throw new Error(`the sync diverged (SYNC_MODEL_SEED=${seed}):\n${problems.join("\n")}`)
      }),
      { seed, numRuns: realRuns, ...(replayPath === undefined ? {} : { path: replayPath }) }
    )
    console.log(`sync model (real git): ${realRuns} sequences, ${steps} steps; faults and pauses that took effect:`, sync.stats)
  })
})
