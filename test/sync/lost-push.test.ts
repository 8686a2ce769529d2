import { describe, expect, it } from "vitest"
import { httpSync } from "../support/HttpDriver.js"
import { useFixture } from "../support/LabFixture.js"
import { memorySync } from "../support/MemoryDriver.js"

/**
 * Found by the model-based test (test/sync/model.test.ts): a push lands but its answer is lost (a crash, a cut
 * connection); someone then changes the path back to what it was before. The next attempt sees that the push landed
 * and forgets the write, and from then on the lab must follow the repository like for any other pushed write.
 */
describe("a write whose push landed but whose answer was lost", () => {
  let sync: ReturnType<typeof memorySync>
  useFixture(async () => memorySync(), (started) => (sync = started))

  const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes).toString("utf8"))

  it("an outside push that puts the file back as it was reaches the lab", { timeout: 60_000 }, async () => {
    const { driver } = await sync.newLab() // the repository has X.md "x0"
    await driver.fault("pushLost")
    expect(await driver.write("/X.md", "x api\n")).toBeDefined()
    await driver.drain() // the commit lands, the answer is lost
    await driver.outside([["X.md", Buffer.from("x0\n")]])
    const seen = await driver.quiesce()
    expect(text(seen.remote.get("X.md"))).toBe("x0\n")
    expect(seen.lab.get("/X.md")).toBe("x0\n")
    expect(seen.history.filter((c) => c.message.startsWith("Update X.md"))).toHaveLength(1)
    expect({ pendingCommits: seen.pendingCommits, lastError: seen.lastError }).toEqual({ pendingCommits: 0, lastError: null })
  })

  it("an outside push that brings a deleted file back reaches the lab", { timeout: 60_000 }, async () => {
    const { driver } = await sync.newLab()
    await driver.fault("pushLost")
    expect(await driver.remove("/X.md")).toBeDefined()
    await driver.drain()
    await driver.outside([["X.md", Buffer.from("x0\n")]])
    const seen = await driver.quiesce()
    expect(text(seen.remote.get("X.md"))).toBe("x0\n")
    expect(seen.lab.get("/X.md")).toBe("x0\n")
  })
})

describe("a write whose push landed but whose answer was lost, on a real git host", () => {
  let sync: Awaited<ReturnType<typeof httpSync>>
  useFixture(httpSync, (started) => (sync = started), 120_000)

  it("an outside push that puts the file back as it was reaches the lab", { timeout: 120_000 }, async () => {
    const { driver } = await sync.newLab() // the repository has X.md "x0"
    await driver.fault("pushLost")
    expect(await driver.write("/X.md", "x api\n")).toBeDefined()
    await driver.drain() // the worker's push lands, its answer is lost; the retry finds it landed
    await driver.outside([["X.md", Buffer.from("x0\n")]])
    const seen = await driver.quiesce() // ends with a forced sync
    expect(Buffer.from(seen.remote.get("X.md") ?? []).toString("utf8")).toBe("x0\n")
    expect(seen.lab.get("/X.md")).toBe("x0\n")
    expect(seen.history.filter((c) => c.message.startsWith("Update X.md"))).toHaveLength(1)
    expect({ pendingCommits: seen.pendingCommits, lastError: seen.lastError }).toEqual({ pendingCommits: 0, lastError: null })
  })
})
