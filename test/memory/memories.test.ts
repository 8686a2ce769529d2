/**
 * The memory service on its own (fast tier: in-memory PGlite, no HTTP): what it stores, what it refuses, and that
 * a lab sees only its own entries. The HTTP contract is tested in test/memory/memory-http.test.ts.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { Agents } from "../../src/agents/Agents.js"
import { NotFoundInLab } from "../../src/common/DomainErrors.js"
import { systemLab } from "../../src/labs/LabId.js"
import { Labs } from "../../src/labs/Labs.js"
import { MemoryId } from "../../src/memory/Memory.js"
import { Memories } from "../../src/memory/Memories.js"
import { testLayer } from "../support/TestLayers.js"

const Services = testLayer(Layer.mergeAll(Memories.Default, Agents.Default, Labs.Default))

/** A lab with one agent, as the service's own code would hold them. */
const labWithAgent = (slug: string) =>
  Effect.gen(function* () {
    const lab = yield* Effect.orDie((yield* Labs).create({ slug, name: slug, plan: "team" }))
    const labId = systemLab(lab.id)
    const agent = yield* Effect.orDie((yield* Agents).create(labId, { name: "Scout", role: "scout", model: "m" }, "test"))
    return { labId, agent }
  })

layer(Services, { timeout: 60_000 })("Memories", (it) => {
  it.effect("records an entry with its defaults and reads it back", () =>
    Effect.gen(function* () {
      const memories = yield* Memories
      const { labId, agent } = yield* labWithAgent("mem-a")
      const entry = yield* memories.create(labId, { agentId: agent.id, kind: "fact", content: "lr 3e-4", tags: [], importance: 0.5 }, "test")
      expect(entry).toMatchObject({ labId, agentId: agent.id, kind: "fact", content: "lr 3e-4", importance: 0.5 })
      expect(entry.id).toMatch(/^mem_[0-9a-z]{16}$/)
      expect(yield* memories.get(labId, entry.id)).toEqual(entry)
      const listed = yield* memories.list(labId, { limit: 10, cursor: (yield* Effect.succeedNone), agentId: agent.id })
      expect(listed.items.map((e) => e.id)).toEqual([entry.id])
    })
  )

  describe("a lab sees only its own entries", () => {
    it.effect("another lab's entry is NotFoundInLab, with what was looked for, for reading and deleting", () =>
      Effect.gen(function* () {
        const memories = yield* Memories
        const mine = yield* labWithAgent("mem-b")
        const theirs = yield* labWithAgent("mem-c")
        const entry = yield* memories.create(mine.labId, { agentId: mine.agent.id, kind: "plan", content: "x", tags: [], importance: 1 }, "test")
        const expected = new NotFoundInLab({ resource: "memory entry", id: entry.id })
        expect(yield* Effect.exit(memories.get(theirs.labId, entry.id))).toEqual(Exit.fail(expected))
        expect(yield* Effect.exit(memories.remove(theirs.labId, entry.id, "test"))).toEqual(Exit.fail(expected))
        expect(yield* memories.get(mine.labId, entry.id)).toEqual(entry)
      })
    )
  })

  it.effect("deletes an entry once: the second delete is NotFoundInLab", () =>
    Effect.gen(function* () {
      const memories = yield* Memories
      const { labId, agent } = yield* labWithAgent("mem-d")
      const entry = yield* memories.create(labId, { agentId: agent.id, kind: "observation", content: "y", tags: ["t"], importance: 0 }, "test")
      expect((yield* memories.remove(labId, entry.id, "test")).id).toBe(entry.id)
      const again = yield* Effect.flip(memories.remove(labId, entry.id, "test"))
      expect(again).toMatchObject({ _tag: "NotFoundInLab", resource: "memory entry", id: entry.id })
      expect(again.message).toBe(`no memory entry ${entry.id} in this lab`)
      expect(yield* Effect.flip(memories.get(labId, MemoryId.make("mem_missing")))).toBeInstanceOf(NotFoundInLab)
    })
  )
})
