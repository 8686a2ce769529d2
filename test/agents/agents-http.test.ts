import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Agent } from "../../src/agents/Agent.js"
import { MemoryEntry } from "../../src/memory/Memory.js"
import { data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, patchIn, startFixture, useFixture, walk } from "../support/LabFixture.js"
import { expectCreateGuarded, expectListGuarded } from "../support/RouteChecks.js"

let fx: Fixture
useFixture(() => startFixture("agents"), (started) => (fx = started))

const AGENTS = "/api/v1/agents"
const create = async (name: string, extra: Record<string, unknown> = {}) =>
  data(await fx.post(AGENTS, { labId: fx.lab.id, name, model: "claude-sonnet-4", ...extra }), Agent, 201)
const patch = patchIn(() => fx, AGENTS)

describe("POST /api/v1/agents (extension)", () => {
  it("creates an idle agent (201) and records agent.created by the calling key", async () => {
    const agent = await create("Scout", { role: "literature reviewer" })
    expect(agent).toMatchObject({
      labId: fx.lab.id,
      name: "Scout",
      role: "literature reviewer",
      model: "claude-sonnet-4",
      status: "idle",
      lastActiveAt: null
    })
    expect(agent.id).toMatch(/^agent_[0-9a-z]{16}$/)
    expect(agent.createdAt).toEqual(agent.updatedAt)
    const entry = findActivity(await fx.activity(), "agent.created", agent.id)
    expect(entry).toMatchObject({ actor: fx.writerId, data: { name: "Scout", model: "claude-sonnet-4" } })
  })

  it("accepts the lab's slug and defaults role to empty", async () => {
    const agent = data(await fx.post(AGENTS, { labId: fx.lab.slug, name: "Slugger", model: "m" }), Agent, 201)
    expect(await agent).toMatchObject({ labId: fx.lab.id, role: "" })
  })

  it("422: unknown and server-owned fields, missing and bad values, naming the field", async () => {
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "X", model: "m", colour: "red" }), "colour is not a known field")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "X", model: "m", status: "active" }), "status is not a known field")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "X", model: "m", id: "agent_x" }), "id is not a known field")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "X" }), "model is required")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "   ", model: "m" }), "name")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "x".repeat(101), model: "m" }), "name")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: "X", model: "m", role: "r".repeat(501) }), "role")
    await expectInvalid(await fx.post(AGENTS, { labId: fx.lab.id, name: 42, model: "m" }), "name")
  })

  it("409 for a name the lab already uses (case-insensitive), naming the agent", async () => {
    const first = await create("Unique One")
    const message = await expectError(await fx.post(AGENTS, { labId: fx.lab.id, name: "unique one", model: "m" }), 409, "conflict")
    expect(message).toContain(first.id)
    // the same name in another lab is fine
    await data(await fx.post(AGENTS, { labId: fx.other.id, name: "Unique One", model: "m" }, fx.stranger), Agent, 201)
  })

  it("403 for a foreign lab and for a read-only key; 404 for the operator naming a missing lab", async () => {
    await expectCreateGuarded(fx, AGENTS, { name: "Z", model: "m" })
  })
})

describe("GET /api/v1/agents (catalog)", () => {
  it("lists the lab's agents newest first, paginated, filtered by status; read-only keys may read", async () => {
    const a = await create("List A")
    const b = await create("List B")
    const all = await walk(fx, AGENTS, { labId: fx.lab.id }, Agent)
    const ids = all.map((x) => x.id)
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(all.every((x) => x.labId === fx.lab.id)).toBe(true)
    await data(await patch(a.id, { status: "paused" }), Agent)
    const paused = await page(await fx.get(AGENTS, { labId: fx.lab.id, status: "paused" }, fx.reader), Agent)
    expect(paused.data.map((x) => x.id)).toEqual([a.id])
  })

  it("422 for a bad status or limit; 403 foreign lab; 404 the operator's missing lab", async () => {
    await expectInvalid(await fx.get(AGENTS, { labId: fx.lab.id, status: "sleeping" }), "status")
    await expectInvalid(await fx.get(AGENTS, { labId: fx.lab.id, limit: 1000 }), "limit")
    await expectInvalid(await fx.get(AGENTS, { labId: fx.lab.id, cursor: "garbage" }), "cursor")
    await expectListGuarded(fx, AGENTS)
  })
})

describe("GET /api/v1/agents/{id} (extension)", () => {
  it("reads one agent; 404 for a missing id or one of another lab; 403 for a foreign lab", async () => {
    const agent = await create("Reader Visible")
    expect(await data(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }, fx.reader), Agent)).toEqual(agent)
    await expectError(await fx.get(`${AGENTS}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectInvalid(await fx.get(`${AGENTS}/${agent.id}`, {}), "labId")
  })
})

describe("PATCH /api/v1/agents/{id} (extension): lifecycle", () => {
  it("walks idle → active → paused → idle → active → retired, one activity entry per change; retired is final", async () => {
    const agent = await create("Walker")
    const steps = [
      ["active", "agent.activated"],
      ["paused", "agent.paused"],
      ["idle", "agent.idled"],
      ["active", "agent.activated"],
      ["retired", "agent.retired"]
    ] as const
    let previous = agent
    for (const [status, kind] of steps) {
      const next = await data(await patch(agent.id, { status }), Agent)
      expect(next.status).toBe(status)
      expect(next.updatedAt.getTime()).toBeGreaterThanOrEqual(previous.updatedAt.getTime())
      const entries = (await fx.activity()).filter((e) => e.ref === agent.id && e.kind === kind)
      expect(entries[0]).toMatchObject({ actor: fx.writerId, data: { from: previous.status, to: status } })
      previous = next
    }
    for (const status of ["active", "idle", "paused"]) {
      const message = await expectError(await patch(agent.id, { status }), 409, "conflict")
      expect(message).toContain("retired")
    }
    await expectError(await patch(agent.id, { role: "new role" }), 409, "conflict")
    expect(await data(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }), Agent)).toEqual(previous)
  })

  it("the same status again changes nothing and records nothing", async () => {
    const agent = await create("Steady")
    const before = (await fx.activity()).length
    const same = await data(await patch(agent.id, { status: "idle" }), Agent)
    expect(same).toEqual(agent)
    expect((await fx.activity()).length).toBe(before)
  })

  it("changes name, role, model and lastActiveAt (agent.updated); refuses a lastActiveAt in the future", async () => {
    const agent = await create("Editable")
    const at = new Date(Date.now() - 60_000)
    const updated = await data(
      await patch(agent.id, { name: "Edited", role: "planner", model: "claude-opus-4", lastActiveAt: at.toISOString() }),
      Agent
    )
    expect(updated).toMatchObject({ name: "Edited", role: "planner", model: "claude-opus-4", status: "idle", lastActiveAt: at })
    expect(findActivity(await fx.activity(), "agent.updated", agent.id).data).toMatchObject({
      changed: ["name", "role", "model", "lastActiveAt"]
    })
    await expectInvalid(await patch(agent.id, { lastActiveAt: new Date(Date.now() + 3_600_000).toISOString() }), "lastActiveAt")
    await expectInvalid(await patch(agent.id, { lastActiveAt: "yesterday" }), "lastActiveAt")
  })

  it("422 for unknown or server-owned fields and bad values; 409 for a taken name", async () => {
    const agent = await create("Patchable")
    await create("Taken Name")
    await expectInvalid(await patch(agent.id, { createdAt: new Date().toISOString() }), "createdAt is not a known field")
    await expectInvalid(await patch(agent.id, { labid: fx.lab.id }), "labid is not a known field")
    await expectInvalid(await patch(agent.id, { status: "asleep" }), "status")
    await expectInvalid(await patch(agent.id, { name: "" }), "name")
    await expectError(await patch(agent.id, { name: "TAKEN NAME" }), 409, "conflict")
    // renaming to its own name in another case is fine
    expect((await data(await patch(agent.id, { name: "PATCHABLE" }), Agent)).name).toBe("PATCHABLE")
  })

  it("404 for a missing agent; 403 for a foreign lab and a read-only key", async () => {
    const agent = await create("Guarded")
    await expectError(await patch(MISSING, { status: "active" }), 404, "not_found")
    await expectError(await patch(agent.id, { status: "active" }, fx.stranger), 403, "forbidden")
    await expectError(await patch(agent.id, { status: "active" }, fx.reader), 403, "forbidden")
    await expectError(await fx.patch(`${AGENTS}/${agent.id}`, { labId: fx.other.id, status: "active" }, fx.stranger), 404, "not_found")
  })
})

describe("lastActiveAt follows the agent's work", () => {
  it("moves forward when the agent records memory", async () => {
    const agent = await create("Busy")
    const before = Date.now()
    const entry = await data(
      await fx.post("/api/v1/memory", { labId: fx.lab.id, agentId: agent.id, kind: "observation", content: "saw a thing" }),
      MemoryEntry,
      201
    )
    const after = await data(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }), Agent)
    expect(after.lastActiveAt).toEqual(entry.createdAt)
    expect(after.lastActiveAt?.getTime()).toBeGreaterThanOrEqual(before - 1000)
  })
})

describe("DELETE /api/v1/agents/{id} (extension)", () => {
  it("deletes (answers the agent), records agent.deleted, then 404", async () => {
    const agent = await create("Doomed")
    const deleted = await data(await fx.del(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }), Agent)
    expect(deleted).toEqual(agent)
    expect(findActivity(await fx.activity(), "agent.deleted", agent.id).actor).toBe(fx.writerId)
    await expectError(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.del(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }), 404, "not_found")
    // its name is free again
    await create("Doomed")
  })

  it("403 for a foreign lab and a read-only key; 422 without labId", async () => {
    const agent = await create("Protected")
    await expectError(await fx.del(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    await expectInvalid(await fx.del(`${AGENTS}/${agent.id}`, {}), "labId")
    expect(await data(await fx.get(`${AGENTS}/${agent.id}`, { labId: fx.lab.id }), Agent)).toEqual(agent)
  })
})

describe("the contract", () => {
  it("documents the agent routes in the OpenAPI document", async () => {
    const spec = Schema.decodeUnknownSync(Schema.Struct({ paths: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }))(
      await (await fx.server.request("GET", "/api/v1/openapi.json")).json()
    )
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(["/api/v1/agents", "/api/v1/agents/{id}"]))
  })
})
