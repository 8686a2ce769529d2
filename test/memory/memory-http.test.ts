import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Agent } from "../../src/agents/Agent.js"
import { MemoryEntry } from "../../src/memory/Memory.js"
import { data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, startFixture, walk } from "../support/LabFixture.js"
import { expectDeletedThenGone, expectListGuarded } from "../support/RouteChecks.js"

let fx: Fixture
let scout: Agent
let critic: Agent
beforeAll(async () => {
  fx = await startFixture("memory")
  const agent = async (name: string, labId = fx.lab.id, token = fx.writer) =>
    data(await fx.post("/api/v1/agents", { labId, name, model: "m" }, token), Agent, 201)
  scout = await agent("Scout")
  critic = await agent("Critic")
})
afterAll(() => fx.close())

const MEMORY = "/api/v1/memory"
const remember = async (body: Record<string, unknown>) =>
  data(await fx.post(MEMORY, { labId: fx.lab.id, agentId: scout.id, kind: "observation", content: "x", ...body }), MemoryEntry, 201)

describe("POST /api/v1/memory (catalog)", () => {
  it("records an entry (201) with defaults; the agent's lastActiveAt moves; memory.created carries agentId", async () => {
    const entry = await remember({ content: "Loss plateaus after epoch 3", tags: ["training", "loss"] })
    expect(entry).toMatchObject({
      labId: fx.lab.id,
      agentId: scout.id,
      kind: "observation",
      content: "Loss plateaus after epoch 3",
      tags: ["training", "loss"],
      importance: 0.5
    })
    expect(entry.id).toMatch(/^mem_/)
    const agent = await data(await fx.get(`/api/v1/agents/${scout.id}`, { labId: fx.lab.id }), Agent)
    expect(agent.lastActiveAt).toEqual(entry.createdAt)
    const activity = findActivity(await fx.activity(), "memory.created", entry.id)
    expect(activity).toMatchObject({ actor: fx.writerId, data: { agentId: scout.id, kind: "observation" } })
  })

  it("takes each kind and an importance from 0 to 1", async () => {
    for (const [kind, importance] of [["fact", 0], ["plan", 1], ["reflection", 0.25]] as const) {
      expect(await remember({ kind, importance })).toMatchObject({ kind, importance })
    }
  })

  it("422: an agent that is not the lab's names agentId; unknown fields, bad kind, importance, content, tags", async () => {
    await expectInvalid(await fx.post(MEMORY, { labId: fx.lab.id, agentId: MISSING, kind: "fact", content: "x" }), "agentId")
    const foreign = await data(await fx.post("/api/v1/agents", { labId: fx.other.id, name: "Alien", model: "m" }, fx.stranger), Agent, 201)
    await expectInvalid(await fx.post(MEMORY, { labId: fx.lab.id, agentId: foreign.id, kind: "fact", content: "x" }), "agentId")
    const base = { labId: fx.lab.id, agentId: scout.id, kind: "fact", content: "x" }
    await expectInvalid(await fx.post(MEMORY, { ...base, mood: "happy" }), "mood is not a known field")
    await expectInvalid(await fx.post(MEMORY, { ...base, createdAt: "2020-01-01T00:00:00Z" }), "createdAt is not a known field")
    await expectInvalid(await fx.post(MEMORY, { ...base, kind: "dream" }), "kind")
    await expectInvalid(await fx.post(MEMORY, { ...base, importance: 1.5 }), "importance")
    await expectInvalid(await fx.post(MEMORY, { ...base, importance: -0.1 }), "importance")
    await expectInvalid(await fx.post(MEMORY, { ...base, content: "   " }), "content")
    await expectInvalid(await fx.post(MEMORY, { ...base, content: "x".repeat(20_001) }), "content")
    await expectInvalid(await fx.post(MEMORY, { ...base, tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }), "tags")
    await expectInvalid(await fx.post(MEMORY, { ...base, tags: [""] }), "tags")
    await expectInvalid(await fx.post(MEMORY, { labId: fx.lab.id, kind: "fact", content: "x" }), "agentId is required")
  })

  it("409 for a retired agent", async () => {
    const retiree = await data(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "Retiree", model: "m" }), Agent, 201)
    await data(await fx.patch(`/api/v1/agents/${retiree.id}`, { labId: fx.lab.id, status: "retired" }), Agent)
    const message = await expectError(
      await fx.post(MEMORY, { labId: fx.lab.id, agentId: retiree.id, kind: "fact", content: "x" }),
      409,
      "conflict"
    )
    expect(message).toContain("retired")
  })

  it("403 for a foreign lab and a read-only key; 404 for the operator's missing lab", async () => {
    const body = { labId: fx.lab.id, agentId: scout.id, kind: "fact", content: "x" }
    await expectError(await fx.post(MEMORY, body, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(MEMORY, body, fx.reader), 403, "forbidden")
    await expectError(await fx.post(MEMORY, { ...body, labId: "no-such-lab" }, fx.server.adminKey), 404, "not_found")
  })
})

describe("GET /api/v1/memory (catalog)", () => {
  it("lists newest first and filters by agent, kind, tag and time range", async () => {
    const start = new Date()
    const a = await remember({ agentId: critic.id, kind: "plan", content: "plan A", tags: ["alpha"] })
    const b = await remember({ agentId: critic.id, kind: "fact", content: "fact B", tags: ["alpha", "beta"] })
    const c = await remember({ agentId: critic.id, kind: "fact", content: "fact C", tags: ["beta"] })
    const ids = async (params: Record<string, string>) =>
      (await walk(fx, MEMORY, { labId: fx.lab.id, from: start.toISOString(), ...params }, MemoryEntry)).map((e) => e.id)
    expect(await ids({ agentId: critic.id })).toEqual([c.id, b.id, a.id])
    expect(await ids({ agentId: critic.id, kind: "fact" })).toEqual([c.id, b.id])
    expect(await ids({ tag: "alpha" })).toEqual([b.id, a.id])
    expect(await ids({ tag: "beta", kind: "fact" })).toEqual([c.id, b.id])
    expect(await ids({ to: b.createdAt.toISOString(), agentId: critic.id })).toEqual(
      a.createdAt < b.createdAt ? [a.id] : []
    )
    expect(await ids({ from: new Date(Date.now() + 60_000).toISOString() })).toEqual([])
    // read-only keys read
    const first = await page(await fx.get(MEMORY, { labId: fx.lab.id, limit: 1 }, fx.reader), MemoryEntry)
    expect(first.data).toHaveLength(1)
    expect(first.meta.has_more).toBe(true)
  })

  it("422 for bad filters; 403 foreign lab; 404 the operator's missing lab", async () => {
    await expectInvalid(await fx.get(MEMORY, { labId: fx.lab.id, kind: "dream" }), "kind")
    await expectInvalid(await fx.get(MEMORY, { labId: fx.lab.id, from: "not a date" }), "from")
    await expectInvalid(await fx.get(MEMORY, { labId: fx.lab.id, limit: 0 }), "limit")
    await expectListGuarded(fx, MEMORY)
  })
})

describe("GET and DELETE /api/v1/memory/{id} (extensions)", () => {
  it("reads one entry, deletes it (memory.deleted), then 404", async () => {
    const entry = await remember({ content: "ephemeral" })
    expect(await data(await fx.get(`${MEMORY}/${entry.id}`, { labId: fx.lab.id }, fx.reader), MemoryEntry)).toEqual(entry)
    const activity = await expectDeletedThenGone(fx, MEMORY, entry, MemoryEntry, "memory.deleted")
    expect(activity).toMatchObject({ actor: fx.writerId, data: { entryOf: scout.id } })
  })

  it("404 for a missing id or one of another lab; 403 for a foreign lab or a read-only delete; 422 without labId", async () => {
    const entry = await remember({ content: "guarded" })
    await expectError(await fx.get(`${MEMORY}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.get(`${MEMORY}/${entry.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${MEMORY}/${entry.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${MEMORY}/${entry.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${MEMORY}/${entry.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    await expectInvalid(await fx.get(`${MEMORY}/${entry.id}`, {}), "labId")
    expect(await data(await fx.get(`${MEMORY}/${entry.id}`, { labId: fx.lab.id }), MemoryEntry)).toEqual(entry)
  })
})
