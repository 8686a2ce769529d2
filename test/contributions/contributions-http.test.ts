import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { data, expectError, expectInvalid, type Fixture, MISSING, page, startFixture, walk } from "../support/LabFixture.js"

const Contribution = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  contributor: Schema.String,
  contributorKind: Schema.Literal("credential", "agent", "user", "system"),
  kind: Schema.String,
  ref: Schema.NullOr(Schema.String),
  summary: Schema.String,
  source: Schema.Literal("activity", "recorded"),
  at: Schema.String
})
type Contribution = typeof Contribution.Type
const Summary = Schema.Struct({
  contributor: Schema.String,
  contributorKind: Schema.String,
  count: Schema.Number,
  kinds: Schema.Record({ key: Schema.String, value: Schema.Number }),
  firstAt: Schema.String,
  lastAt: Schema.String
})
const Agent = Schema.Struct({ id: Schema.String, lastActiveAt: Schema.NullOr(Schema.String) })
const Memory = Schema.Struct({ id: Schema.String })

const PATH = "/api/v1/contributions"
let fx: Fixture
let agent: typeof Agent.Type
let retired: typeof Agent.Type
let memoryId: string

const record = async (json: Record<string, unknown>, token = fx.writer) => data(await fx.post(PATH, json, token), Contribution, 201)
const everything = (params: Record<string, string | undefined> = {}) =>
  walk(fx, PATH, { labId: fx.lab.id, ...params }, Contribution, 100)

beforeAll(async () => {
  fx = await startFixture("contrib")
  agent = await data(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "Ada", model: "claude-sonnet-4" }), Agent, 201)
  retired = await data(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "Old", model: "gpt-2" }), Agent, 201)
  await data(
    await fx.server.request("PATCH", `/api/v1/agents/${retired.id}`, { token: fx.writer, json: { labId: fx.lab.id, status: "retired" } }),
    Agent
  )
  memoryId = (
    await data(
      await fx.post("/api/v1/memory", { labId: fx.lab.id, agentId: agent.id, kind: "fact", content: "Warmup of 500 steps stabilises training" }),
      Memory,
      201
    )
  ).id
  await data(await fx.post("/api/v1/telemetry", { labId: fx.lab.id, events: [{ name: "loss", value: 1 }] }), Schema.Struct({ batchId: Schema.String }), 201)
  // entries of the other kinds of actors: a git sync and a person signed in with a JWT
  const now = new Date().toISOString()
  await fx.server.sql((sql) =>
    Effect.asVoid(sql`INSERT INTO activity (id, lab_id, kind, ref, message, actor, data, created_at) VALUES
      ('act_sync_1', ${fx.lab.id}, 'sync', 'abc1234', 'Synced o/r', 'sync', '{}', ${now}::timestamptz),
      ('act_user_1', ${fx.lab.id}, 'paper.created', 'paper_1', 'Created a paper', 'user_person1', '{}', ${now}::timestamptz)`)
  )
}, 180_000)
afterAll(() => fx.close())

describe("POST /api/v1/contributions", () => {
  it("records an agent's contribution (201), logs it and marks the agent active", async () => {
    const before = Date.now()
    const c = await record({ labId: fx.lab.slug, agentId: agent.id, kind: "analysis.written", ref: "/notes/analysis.md", summary: "Wrote the ablation analysis" })
    expect(c).toMatchObject({
      labId: fx.lab.id,
      contributor: agent.id,
      contributorKind: "agent",
      kind: "analysis.written",
      ref: "/notes/analysis.md",
      summary: "Wrote the ablation analysis",
      source: "recorded"
    })
    expect(c.id).toMatch(/^ctb_/)
    const entry = (await fx.activity()).find((a) => a.kind === "contribution.recorded" && a.ref === c.id)
    expect(entry).toMatchObject({ actor: fx.writerId, data: { contributor: agent.id, kind: "analysis.written" } })
    const after = await data(await fx.get(`/api/v1/agents/${agent.id}`, { labId: fx.lab.id }), Agent)
    expect(Date.parse(after.lastActiveAt ?? "")).toBeGreaterThanOrEqual(before - 1000)
  })

  it("credits the calling credential without an agentId", async () => {
    const c = await record({ labId: fx.lab.id, kind: "review", summary: "Reviewed the draft" })
    expect(c).toMatchObject({ contributor: fx.writerId, contributorKind: "credential", ref: null })
    const admin = await record({ labId: fx.lab.id, kind: "review", summary: "Operator review" }, fx.server.adminKey)
    expect(admin).toMatchObject({ contributor: "admin", contributorKind: "credential" })
  })

  it("answers 422 naming the field, 409 for a retired agent, 403 and 404 for scopes", async () => {
    const lab = fx.lab.id
    const ok = { labId: lab, kind: "review", summary: "s" }
    await expectInvalid(await fx.post(PATH, { ...ok, by: "me" }), "by")
    await expectInvalid(await fx.post(PATH, { ...ok, kind: "Not A Kind" }), "kind")
    await expectInvalid(await fx.post(PATH, { ...ok, summary: "   " }), "summary")
    await expectInvalid(await fx.post(PATH, { ...ok, summary: "x".repeat(2001) }), "summary")
    await expectInvalid(await fx.post(PATH, { ...ok, ref: "r".repeat(501) }), "ref")
    await expectInvalid(await fx.post(PATH, { labId: lab, summary: "s" }), "kind")
    await expectInvalid(await fx.post(PATH, { ...ok, agentId: MISSING }), "agentId")
    await expectError(await fx.post(PATH, { ...ok, agentId: retired.id }), 409, "conflict")
    await expectError(await fx.post(PATH, ok, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(PATH, ok, fx.reader), 403, "forbidden")
    await expectError(await fx.post(PATH, { ...ok, labId: MISSING }, fx.server.adminKey), 404, "not_found")
    // another lab's agent is not this lab's
    await expectInvalid(await fx.post(PATH, { ...ok, labId: fx.other.id, agentId: agent.id }, fx.stranger), "agentId")
  })
})

describe("GET /api/v1/contributions", () => {
  it("lists activity and recorded contributions together, newest first, without double counting", async () => {
    const all = await everything()
    const at = all.map((c) => Date.parse(c.at))
    expect([...at].sort((a, b) => b - a)).toEqual(at)
    // a recorded contribution appears once, as itself
    expect(all.some((c) => c.kind === "contribution.recorded")).toBe(false)
    const kinds = all.map((c) => `${c.source}:${c.kind}:${c.contributorKind}`)
    expect(kinds).toEqual(
      expect.arrayContaining([
        "activity:agent.created:credential",
        "activity:agent.retired:credential",
        "activity:memory.created:agent",
        "activity:telemetry.ingested:credential",
        "activity:sync:system",
        "activity:paper.created:user",
        "recorded:analysis.written:agent",
        "recorded:review:credential"
      ])
    )
    // the memory written for the agent is credited to the agent
    expect(all.find((c) => c.kind === "memory.created")).toMatchObject({ contributor: agent.id, ref: memoryId })
    // pages of 2 walk the same list
    expect((await walk(fx, PATH, { labId: fx.lab.id }, Contribution, 2)).map((c) => c.id)).toEqual(all.map((c) => c.id))
  })

  it("filters by contributor, kind of contributor, kind (or family), ref and date range", async () => {
    const byAgent = await everything({ contributor: agent.id })
    expect(byAgent.map((c) => c.kind).sort()).toEqual(["analysis.written", "memory.created"])
    expect((await everything({ contributorKind: "system" })).map((c) => c.contributor)).toEqual(["sync"])
    expect((await everything({ contributorKind: "user" })).map((c) => c.contributor)).toEqual(["user_person1"])
    const agentFamily = await everything({ kind: "agent" })
    expect(agentFamily.map((c) => c.kind).sort()).toEqual(["agent.created", "agent.created", "agent.retired"])
    expect((await everything({ kind: "agent.retired" })).map((c) => c.ref)).toEqual([retired.id])
    expect((await everything({ kind: "review", contributor: "admin" })).map((c) => c.summary)).toEqual(["Operator review"])
    expect((await everything({ ref: "/notes/analysis.md" })).map((c) => c.kind)).toEqual(["analysis.written"])

    const all = await everything()
    const newest = all[0] as Contribution
    const fromNewest = await everything({ from: newest.at })
    expect(fromNewest.every((c) => Date.parse(c.at) >= Date.parse(newest.at))).toBe(true)
    expect(fromNewest.length).toBeGreaterThan(0)
    expect(await everything({ to: "2000-01-01T00:00:00Z" })).toEqual([])
  })

  it("summarises per contributor (extension), most contributions first", async () => {
    const summary = (await page(await fx.get(`${PATH}/summary`, { labId: fx.lab.id }), Summary)).data
    const counts = summary.map((s) => s.count)
    expect([...counts].sort((a, b) => b - a)).toEqual(counts)
    const all = await everything()
    expect(counts.reduce((a, b) => a + b, 0)).toBe(all.length)
    const writer = summary.find((s) => s.contributor === fx.writerId)
    expect(writer).toMatchObject({ contributorKind: "credential" })
    expect(writer?.count).toBe(all.filter((c) => c.contributor === fx.writerId).length)
    expect(summary.find((s) => s.contributor === agent.id)).toMatchObject({
      contributorKind: "agent",
      count: 2,
      kinds: { "analysis.written": 1, "memory.created": 1 }
    })
    // paged one by one: the same rows
    const paged = await walk(fx, `${PATH}/summary`, { labId: fx.lab.id }, Summary, 1)
    expect(paged.map((s) => s.contributor)).toEqual(summary.map((s) => s.contributor))
    // filtered like the list
    const agents = (await page(await fx.get(`${PATH}/summary`, { labId: fx.lab.id, contributorKind: "agent" }), Summary)).data
    expect(agents.map((s) => s.contributor)).toEqual([agent.id])
  })

  it("keeps labs apart", async () => {
    await data(await fx.post(PATH, { labId: fx.other.id, kind: "review", summary: "elsewhere" }, fx.stranger), Contribution, 201)
    expect((await everything()).some((c) => c.summary === "elsewhere")).toBe(false)
    const theirs = await page(await fx.get(PATH, { labId: fx.other.id }, fx.stranger), Contribution)
    expect(theirs.data.map((c) => c.summary)).toContain("elsewhere")
  })

  it("answers 422 for bad parameters, 403 for a foreign lab, 404 for the operator on a missing lab", async () => {
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, contributorKind: "robot" }), "contributorKind")
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, kind: "BAD KIND" }), "kind")
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, from: "2024-02-01T00:00:00Z", to: "2024-01-01T00:00:00Z" }), "from")
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, cursor: "nope" }), "cursor")
    await expectInvalid(await fx.get(`${PATH}/summary`, { labId: fx.lab.id, cursor: "nope" }), "cursor")
    await expectError(await fx.get(PATH, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(`${PATH}/summary`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(PATH, { labId: MISSING }, fx.server.adminKey), 404, "not_found")
    expect((await fx.get(PATH, { labId: fx.lab.id }, fx.reader)).status).toBe(200)
  })
})
