import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Agent } from "../../src/agents/Agent.js"
import { Standup } from "../../src/standups/Standup.js"
import { data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, startFixture, walk } from "../support/LabFixture.js"

let fx: Fixture
let agent: Agent
beforeAll(async () => {
  fx = await startFixture("standups")
  agent = await data(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "Daily", model: "m" }), Agent, 201)
})
afterAll(() => fx.close())

const STANDUPS = "/api/v1/standups"
const post = (body: Record<string, unknown>, token?: string) =>
  fx.post(STANDUPS, { labId: fx.lab.id, done: ["something"], ...body }, token)
const today = () => new Date().toISOString().slice(0, 10)

describe("POST /api/v1/standups (catalog)", () => {
  it("posts a member's standup (201); author defaults to the calling key, date to today (UTC)", async () => {
    const standup = await data(
      await post({ done: ["ran ablation 3"], planned: ["write up results"], blockers: ["GPU quota"] }),
      Standup,
      201
    )
    expect(standup).toMatchObject({
      labId: fx.lab.id,
      date: today(),
      author: { kind: "member", id: fx.writerId },
      done: ["ran ablation 3"],
      planned: ["write up results"],
      blockers: ["GPU quota"]
    })
    expect(standup.id).toMatch(/^std_/)
    const activity = findActivity(await fx.activity(), "standup.created", standup.id)
    expect(activity.actor).toBe(fx.writerId)
    expect(activity.data).not.toHaveProperty("agentId")
  })

  it("an agent's standup names it in the activity (agentId) and moves its lastActiveAt", async () => {
    const standup = await data(await post({ date: "2026-01-05", author: { kind: "agent", id: agent.id } }), Standup, 201)
    expect(standup.author).toEqual({ kind: "agent", id: agent.id })
    expect(findActivity(await fx.activity(), "standup.created", standup.id).data).toMatchObject({ agentId: agent.id, date: "2026-01-05" })
    const after = await data(await fx.get(`/api/v1/agents/${agent.id}`, { labId: fx.lab.id }), Agent)
    expect(after.lastActiveAt).toEqual(standup.createdAt)
  })

  it("409 for a second standup by the same author on the same day, naming the first; other days and authors are fine", async () => {
    const first = await data(await post({ date: "2026-02-02", author: { kind: "member", id: "ada" } }), Standup, 201)
    const message = await expectError(await post({ date: "2026-02-02", author: { kind: "member", id: "ada" } }), 409, "conflict")
    expect(message).toContain(first.id)
    await data(await post({ date: "2026-02-03", author: { kind: "member", id: "ada" } }), Standup, 201)
    await data(await post({ date: "2026-02-02", author: { kind: "member", id: "grace" } }), Standup, 201)
    await data(await post({ date: "2026-02-02", author: { kind: "agent", id: agent.id } }), Standup, 201)
    await expectError(await post({ date: "2026-02-02", author: { kind: "agent", id: agent.id } }), 409, "conflict")
  })

  it("422: unknown fields (also in author), bad dates, an agent not in the lab, empty or oversized lists", async () => {
    await expectInvalid(await post({ mood: "ok" }), "mood is not a known field")
    await expectInvalid(await post({ createdAt: "2026-01-01T00:00:00Z" }), "createdAt is not a known field")
    await expectInvalid(await post({ author: { kind: "member", id: "x", name: "X" } }), "name is not a known field")
    await expectInvalid(await post({ author: { kind: "robot", id: "x" } }), "author.kind")
    await expectInvalid(await post({ date: "2026-02-30" }), "date")
    await expectInvalid(await post({ date: "02/03/2026" }), "date")
    const future = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)
    await expectInvalid(await post({ date: future }), "date")
    await expectInvalid(await post({ author: { kind: "agent", id: MISSING } }), "author.id")
    await expectInvalid(await post({ done: [], planned: [], blockers: [] }), "at least one")
    await expectInvalid(await post({ done: [""] }), "done")
    await expectInvalid(await post({ done: Array.from({ length: 51 }, () => "x") }), "done")
    await expectInvalid(await post({ blockers: "none" }), "blockers")
  })

  it("409 for a retired agent; 403 for a foreign lab and a read-only key; 404 for the operator's missing lab", async () => {
    const retiree = await data(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "Old", model: "m" }), Agent, 201)
    await data(await fx.patch(`/api/v1/agents/${retiree.id}`, { labId: fx.lab.id, status: "retired" }), Agent)
    await expectError(await post({ author: { kind: "agent", id: retiree.id } }), 409, "conflict")
    await expectError(await post({ date: "2026-03-01" }, fx.stranger), 403, "forbidden")
    await expectError(await post({ date: "2026-03-01" }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(STANDUPS, { labId: "no-such-lab", done: ["x"] }, fx.server.adminKey), 404, "not_found")
  })
})

describe("GET /api/v1/standups (catalog)", () => {
  it("lists newest first, filtered by day range (from inclusive, to exclusive) and author", async () => {
    const mk = async (date: string, id: string, kind: "member" | "agent" = "member") =>
      data(await post({ date, author: { kind, id } }), Standup, 201)
    const d1 = await mk("2025-06-01", "lin")
    const d2 = await mk("2025-06-02", "lin")
    const d3 = await mk("2025-06-03", "lin")
    const other = await mk("2025-06-02", "max")
    const ids = async (params: Record<string, string>) => (await walk(fx, STANDUPS, { labId: fx.lab.id, ...params }, Standup)).map((s) => s.id)
    expect(await ids({ authorId: "lin" })).toEqual([d3.id, d2.id, d1.id])
    expect(await ids({ from: "2025-06-02", to: "2025-06-03" })).toEqual([other.id, d2.id])
    expect(await ids({ from: "2025-06-02", to: "2025-06-04", authorKind: "member", authorId: "lin" })).toEqual([d3.id, d2.id])
    expect(await ids({ from: "2025-06-01", to: "2025-06-04", authorKind: "agent" })).toEqual([])
    expect((await ids({ authorKind: "agent", authorId: agent.id })).length).toBeGreaterThan(0)
    expect((await page(await fx.get(STANDUPS, { labId: fx.lab.id }, fx.reader), Standup)).data.length).toBeGreaterThan(0)
  })

  it("422 for bad days or kinds; 403 foreign lab; 404 the operator's missing lab", async () => {
    await expectInvalid(await fx.get(STANDUPS, { labId: fx.lab.id, from: "June 1" }), "from")
    await expectInvalid(await fx.get(STANDUPS, { labId: fx.lab.id, authorKind: "robot" }), "authorKind")
    await expectError(await fx.get(STANDUPS, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(STANDUPS, { labId: "no-such-lab" }, fx.server.adminKey), 404, "not_found")
  })
})

describe("GET /api/v1/standups/{id} (extension)", () => {
  it("reads one; 404 for a missing id or another lab's; 403 for a foreign lab", async () => {
    const standup = await data(await post({ date: "2025-07-01", author: { kind: "member", id: "solo" } }), Standup, 201)
    expect(await data(await fx.get(`${STANDUPS}/${standup.id}`, { labId: fx.lab.id }, fx.reader), Standup)).toEqual(standup)
    await expectError(await fx.get(`${STANDUPS}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.get(`${STANDUPS}/${standup.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${STANDUPS}/${standup.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
  })
})
