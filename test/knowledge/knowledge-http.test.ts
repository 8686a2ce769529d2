import { describe, expect, it } from "vitest"
import { KnowledgeEntry } from "../../src/knowledge/Knowledge.js"
import { data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, patchIn, startFixture, useFixture, walk } from "../support/LabFixture.js"
import { expectCreateGuarded, expectDeletedThenGone, expectListGuarded } from "../support/RouteChecks.js"

let fx: Fixture
useFixture(() => startFixture("knowledge"), (started) => (fx = started))

const KNOWLEDGE = "/api/v1/knowledge"
const add = async (body: Record<string, unknown> = {}) =>
  data(await fx.post(KNOWLEDGE, { labId: fx.lab.id, title: "A fact", body: "It is so.", ...body }), KnowledgeEntry, 201)
const patch = patchIn(() => fx, KNOWLEDGE)

describe("POST /api/v1/knowledge (catalog)", () => {
  it("adds an entry (201) with markdown body, sources and tags; knowledge.created", async () => {
    const entry = await add({
      title: "  Warmup matters  ",
      body: "# Warmup\n\nLinear warmup for **500** steps stabilises training.",
      sources: [
        { title: "Attention Is All You Need", url: "https://arxiv.org/abs/1706.03762" },
        { ref: "doi:10.48550/arXiv.1706.03762" }
      ],
      tags: ["training"]
    })
    expect(entry).toMatchObject({
      labId: fx.lab.id,
      title: "Warmup matters",
      body: "# Warmup\n\nLinear warmup for **500** steps stabilises training.",
      sources: [{ title: "Attention Is All You Need", url: "https://arxiv.org/abs/1706.03762" }, { ref: "doi:10.48550/arXiv.1706.03762" }],
      tags: ["training"]
    })
    expect(entry.id).toMatch(/^kn_/)
    expect(findActivity(await fx.activity(), "knowledge.created", entry.id)).toMatchObject({ actor: fx.writerId })
    expect(await add({ title: "Bare" })).toMatchObject({ sources: [], tags: [] })
  })

  it("422: unknown fields (also inside a source), empty sources, bad URLs, oversized values", async () => {
    const base = { labId: fx.lab.id, title: "T", body: "B" }
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, author: "me" }), "author is not a known field")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, updatedAt: "2020-01-01T00:00:00Z" }), "updatedAt is not a known field")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, sources: [{ title: "x", link: "https://a.b" }] }), "link is not a known field")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, sources: [{}] }), "sources")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, sources: [{ url: "ftp://example.com/x" }] }), "url")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, sources: [{ url: "not a url" }] }), "url")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, sources: Array.from({ length: 51 }, () => ({ ref: "r" })) }), "sources")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, body: "x".repeat(100_001) }), "body")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, body: "  " }), "body")
    await expectInvalid(await fx.post(KNOWLEDGE, { ...base, title: "t".repeat(301) }), "title")
    await expectInvalid(await fx.post(KNOWLEDGE, { labId: fx.lab.id, body: "B" }), "title is required")
  })

  it("403 for a foreign lab and a read-only key; 404 for the operator's missing lab", async () => {
    await expectCreateGuarded(fx, KNOWLEDGE, { title: "T", body: "B" })
  })
})

describe("GET /api/v1/knowledge (catalog)", () => {
  it("lists newest first, paginated, filtered by tag and time", async () => {
    const start = new Date()
    const a = await add({ title: "Tagged A", tags: ["optics", "lasers"] })
    const b = await add({ title: "Tagged B", tags: ["optics"] })
    const c = await add({ title: "Untagged C" })
    const ids = async (params: Record<string, string>) =>
      (await walk(fx, KNOWLEDGE, { labId: fx.lab.id, from: start.toISOString(), ...params }, KnowledgeEntry)).map((e) => e.id)
    expect(await ids({})).toEqual([c.id, b.id, a.id])
    expect(await ids({ tag: "optics" })).toEqual([b.id, a.id])
    expect(await ids({ tag: "lasers" })).toEqual([a.id])
    expect(await ids({ tag: "nothing" })).toEqual([])
    expect((await page(await fx.get(KNOWLEDGE, { labId: fx.lab.id }, fx.reader), KnowledgeEntry)).data.length).toBeGreaterThan(2)
  })

  it("422 for a bad query; 403 foreign lab; 404 the operator's missing lab", async () => {
    await expectInvalid(await fx.get(KNOWLEDGE, { labId: fx.lab.id, to: "soon" }), "to")
    await expectInvalid(await fx.get(KNOWLEDGE, { labId: fx.lab.id, limit: 101 }), "limit")
    await expectListGuarded(fx, KNOWLEDGE)
  })
})

describe("GET, PATCH, DELETE /api/v1/knowledge/{id} (extensions)", () => {
  it("reads, changes (knowledge.updated naming the fields; sources and tags replaced), deletes, then 404", async () => {
    const entry = await add({ title: "Draft idea", tags: ["a"], sources: [{ ref: "r1" }] })
    expect(await data(await fx.get(`${KNOWLEDGE}/${entry.id}`, { labId: fx.lab.id }, fx.reader), KnowledgeEntry)).toEqual(entry)
    const updated = await data(await patch(entry.id, { body: "Refined.", tags: ["b", "c"], sources: [] }), KnowledgeEntry)
    expect(updated).toMatchObject({ title: "Draft idea", body: "Refined.", tags: ["b", "c"], sources: [] })
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(entry.updatedAt.getTime())
    expect(updated.createdAt).toEqual(entry.createdAt)
    expect(findActivity(await fx.activity(), "knowledge.updated", entry.id).data).toMatchObject({ changed: ["body", "sources", "tags"] })
    // nothing to change: same entry, no activity
    const before = (await fx.activity()).length
    expect(await data(await patch(entry.id, { body: "Refined." }), KnowledgeEntry)).toEqual(updated)
    expect((await fx.activity()).length).toBe(before)

    expect((await expectDeletedThenGone(fx, KNOWLEDGE, updated, KnowledgeEntry, "knowledge.deleted")).actor).toBe(fx.writerId)
    await expectError(await patch(entry.id, { title: "x" }), 404, "not_found")
  })

  it("422 for unknown fields and bad values on PATCH", async () => {
    const entry = await add()
    await expectInvalid(await patch(entry.id, { id: "kn_other" }), "id is not a known field")
    await expectInvalid(await patch(entry.id, { title: "" }), "title")
    await expectInvalid(await patch(entry.id, { sources: [{ url: "javascript:alert(1)" }] }), "url")
    await expectInvalid(await patch(entry.id, { tags: "one" }), "tags")
  })

  it("404 for a missing id or one of another lab; 403 for a foreign lab and read-only writes", async () => {
    const entry = await add()
    await expectError(await fx.get(`${KNOWLEDGE}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.get(`${KNOWLEDGE}/${entry.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${KNOWLEDGE}/${entry.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await patch(entry.id, { title: "x" }, fx.stranger), 403, "forbidden")
    await expectError(await patch(entry.id, { title: "x" }, fx.reader), 403, "forbidden")
    await expectError(await fx.del(`${KNOWLEDGE}/${entry.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${KNOWLEDGE}/${entry.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    expect(await data(await fx.get(`${KNOWLEDGE}/${entry.id}`, { labId: fx.lab.id }), KnowledgeEntry)).toEqual(entry)
  })
})
