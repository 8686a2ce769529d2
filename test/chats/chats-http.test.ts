import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Chat, ChatDetail, ChatMessage } from "../../src/chats/Chat.js"
import { KnowledgeEntry } from "../../src/knowledge/Knowledge.js"
import { Task } from "../../src/tasks/Task.js"
import { data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, patchIn, startFixture, useFixture, walk } from "../support/LabFixture.js"
import { expectListGuarded } from "../support/RouteChecks.js"

let fx: Fixture
useFixture(() => startFixture("chats"), (started) => (fx = started))

const CHATS = "/api/v1/chats"
const open = async (title?: string) => data(await fx.post(CHATS, { labId: fx.lab.id, title }), ChatDetail, 201)
const say = (id: string, role: string, content: string, token?: string) =>
  fx.post(`${CHATS}/${id}/messages`, { labId: fx.lab.id, role, content }, token)
const patch = patchIn(() => fx, CHATS)
const promote = (id: string, body: Record<string, unknown>, token?: string) =>
  fx.post(`${CHATS}/${id}/promote`, { labId: fx.lab.id, ...body }, token)
const get = async (id: string) => data(await fx.get(`${CHATS}/${id}`, { labId: fx.lab.id }), ChatDetail)

const KnowledgePromotion = Schema.Struct({ chatId: Schema.String, as: Schema.Literal("knowledge"), entry: KnowledgeEntry, promotedAt: Schema.Date })
const TaskPromotion = Schema.Struct({ chatId: Schema.String, as: Schema.Literal("task"), entry: Task, promotedAt: Schema.Date })

describe("the chat store (extensions)", () => {
  it("opens a chat (201), appends messages in order, reads it back with them; chat.created, chat.message_added", async () => {
    const chat = await open("Learning-rate sweep")
    expect(chat).toMatchObject({
      labId: fx.lab.id,
      title: "Learning-rate sweep",
      outcome: null,
      promotion: null,
      messageCount: 0,
      createdBy: fx.writerId,
      messages: []
    })
    expect(chat.id).toMatch(/^chat_/)
    findActivity(await fx.activity(), "chat.created", chat.id)
    const m1 = await data(await say(chat.id, "user", "Which learning rate should we use?"), ChatMessage, 201)
    const m2 = await data(await say(chat.id, "tool", '{"best_lr": 0.0003}'), ChatMessage, 201)
    const m3 = await data(await say(chat.id, "assistant", "Use 3e-4 with cosine decay."), ChatMessage, 201)
    expect([m1.seq, m2.seq, m3.seq]).toEqual([1, 2, 3])
    expect(m1).toMatchObject({ chatId: chat.id, role: "user", content: "Which learning rate should we use?" })
    const read = await get(chat.id)
    expect(read.messages).toEqual([m1, m2, m3])
    expect(read.messageCount).toBe(3)
    expect(findActivity(await fx.activity(), "chat.message_added", chat.id).data).toMatchObject({ messageId: m3.id, seq: 3, role: "assistant" })
    // read-only keys read
    expect(await data(await fx.get(`${CHATS}/${chat.id}`, { labId: fx.lab.id }, fx.reader), ChatDetail)).toEqual(read)
  })

  it("lists chats newest first without messages; 422 bad query; 403 foreign lab; 404 the operator's missing lab", async () => {
    const from = new Date().toISOString()
    const a = await open("First")
    const b = await open()
    const listed = await walk(fx, CHATS, { labId: fx.lab.id, from }, Chat)
    expect(listed.map((c) => c.id)).toEqual([b.id, a.id])
    expect(listed[0]?.title).toBeNull()
    const raw = Schema.decodeUnknownSync(Schema.Struct({ data: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })) }))(
      await (await fx.get(CHATS, { labId: fx.lab.id, limit: 1 })).json()
    )
    expect(raw.data[0]).not.toHaveProperty("messages")
    expect(raw.data[0]).toHaveProperty("messageCount")
    await expectInvalid(await fx.get(CHATS, { labId: fx.lab.id, limit: "many" }), "limit")
    await expectListGuarded(fx, CHATS)
  })

  it("422: unknown fields, bad roles, empty or oversized content and titles", async () => {
    const chat = await open()
    await expectInvalid(await fx.post(CHATS, { labId: fx.lab.id, topic: "x" }), "topic is not a known field")
    await expectInvalid(await fx.post(CHATS, { labId: fx.lab.id, outcome: "x" }), "outcome is not a known field")
    await expectInvalid(await fx.post(CHATS, { labId: fx.lab.id, title: "" }), "title")
    await expectInvalid(await say(chat.id, "system", "hi"), "role")
    await expectInvalid(await say(chat.id, "user", "   "), "content")
    await expectInvalid(await say(chat.id, "user", "x".repeat(16_001)), "content")
    await expectInvalid(await fx.post(`${CHATS}/${chat.id}/messages`, { labId: fx.lab.id, role: "user", content: "x", seq: 9 }), "seq is not a known field")
    await expectInvalid(await patch(chat.id, { promotion: null }), "promotion is not a known field")
    await expectInvalid(await patch(chat.id, { outcome: "" }), "outcome")
    await expectInvalid(await patch(chat.id, { outcome: "x".repeat(20_001) }), "outcome")
  })

  it("404 for a missing chat or one of another lab; 403 for a foreign lab and a read-only key", async () => {
    const chat = await open("Guarded")
    await expectError(await fx.get(`${CHATS}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.get(`${CHATS}/${chat.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await say(MISSING, "user", "hi"), 404, "not_found")
    await expectError(await patch(MISSING, { outcome: "x" }), 404, "not_found")
    await expectError(await promote(MISSING, { as: "knowledge" }), 404, "not_found")
    await expectError(await fx.get(`${CHATS}/${chat.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(CHATS, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(CHATS, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(CHATS, { labId: "no-such-lab" }, fx.server.adminKey), 404, "not_found")
    for (const token of [fx.stranger, fx.reader]) {
      await expectError(await say(chat.id, "user", "hi", token), 403, "forbidden")
      await expectError(await patch(chat.id, { outcome: "x" }, token), 403, "forbidden")
      await expectError(await promote(chat.id, { as: "task" }, token), 403, "forbidden")
    }
    expect(await get(chat.id)).toMatchObject({ messageCount: 0, outcome: null, promotion: null })
  })

  it("sets, changes and clears the outcome and the title (chat.updated)", async () => {
    const chat = await open("Outcomes")
    const set = await data(await patch(chat.id, { outcome: "We use AdamW." }), ChatDetail)
    expect(set.outcome).toBe("We use AdamW.")
    expect(findActivity(await fx.activity(), "chat.updated", chat.id).data).toMatchObject({ changed: ["outcome"], outcome: "set" })
    const cleared = await data(await patch(chat.id, { outcome: null, title: null }), ChatDetail)
    expect(cleared).toMatchObject({ outcome: null, title: null })
    expect(findActivity(await fx.activity(), "chat.updated", chat.id).data).toMatchObject({ changed: ["title", "outcome"], outcome: "cleared" })
  })
})

describe("POST /api/v1/chats/{id}/promote (catalog)", () => {
  it("turns the outcome into a knowledge entry (201), once; a second promote is 409 naming the entry; the outcome freezes", async () => {
    const chat = await open("Tokenizer choice")
    await data(await say(chat.id, "user", "BPE or unigram?"), ChatMessage, 201)
    await data(await patch(chat.id, { outcome: "## Decision\n\nUnigram tokenizer, 32k vocabulary." }), ChatDetail)
    const result = await data(await promote(chat.id, { as: "knowledge" }), KnowledgePromotion, 201)
    expect(result.chatId).toBe(chat.id)
    expect(result.entry).toMatchObject({
      labId: fx.lab.id,
      title: "Tokenizer choice",
      body: "## Decision\n\nUnigram tokenizer, 32k vocabulary.",
      sources: [{ title: "Tokenizer choice", ref: `chats/${chat.id}` }]
    })
    // it is a real knowledge entry
    expect(await data(await fx.get(`/api/v1/knowledge/${result.entry.id}`, { labId: fx.lab.id }), KnowledgeEntry)).toEqual(result.entry)
    const entries = await fx.activity()
    expect(findActivity(entries, "knowledge.created", result.entry.id).data).toMatchObject({ chatId: chat.id })
    expect(findActivity(entries, "chat.promoted", chat.id)).toMatchObject({
      actor: fx.writerId,
      data: { as: "knowledge", entryId: result.entry.id }
    })
    expect((await get(chat.id)).promotion).toEqual({ as: "knowledge", ref: result.entry.id, at: result.promotedAt })

    for (const as of ["knowledge", "task"]) {
      expect(await expectError(await promote(chat.id, { as }), 409, "conflict")).toContain(result.entry.id)
    }
    expect(await expectError(await patch(chat.id, { outcome: "changed my mind" }), 409, "conflict")).toContain(result.entry.id)
    await expectError(await patch(chat.id, { outcome: null }), 409, "conflict")
    // the title may still change, and messages still arrive
    expect((await data(await patch(chat.id, { title: "Tokenizer (decided)" }), ChatDetail)).title).toBe("Tokenizer (decided)")
    await data(await say(chat.id, "user", "thanks"), ChatMessage, 201)
  })

  it("turns the outcome into a task (todo) with a title of its own or the outcome's first line", async () => {
    const chat = await open()
    await data(await patch(chat.id, { outcome: "# Rerun the ablation\n\nWith seeds 1-5 this time." }), ChatDetail)
    const result = await data(await promote(chat.id, { as: "task" }), TaskPromotion, 201)
    expect(result.entry).toMatchObject({
      labId: fx.lab.id,
      title: "Rerun the ablation",
      description: "# Rerun the ablation\n\nWith seeds 1-5 this time.",
      status: "todo"
    })
    const tasks = await page(await fx.get("/api/v1/tasks", { labId: fx.lab.id }), Task)
    expect(tasks.data).toContainEqual(result.entry)
    const entries = await fx.activity()
    expect(findActivity(entries, "chat.promoted", chat.id).data).toMatchObject({ as: "task", taskId: result.entry.id })
    expect(findActivity(entries, "task.created", result.entry.id)).toMatchObject({ actor: fx.writerId, data: { chatId: chat.id } })

    const titled = await open("Untitled thoughts")
    await data(await patch(titled.id, { outcome: "Buy more GPUs." }), ChatDetail)
    const named = await data(await promote(titled.id, { as: "task", title: "Order 8×H100" }), TaskPromotion, 201)
    expect(named.entry.title).toBe("Order 8×H100")
  })

  it("409 while the chat has no outcome", async () => {
    const chat = await open("Undecided")
    await data(await say(chat.id, "user", "hmm"), ChatMessage, 201)
    expect(await expectError(await promote(chat.id, { as: "knowledge" }), 409, "conflict")).toContain("no outcome")
    expect((await get(chat.id)).promotion).toBeNull()
  })

  it("exactly once under concurrent promotes", async () => {
    const chat = await open("Race")
    await data(await patch(chat.id, { outcome: "Only once." }), ChatDetail)
    const answers = await Promise.all([
      promote(chat.id, { as: "knowledge" }),
      promote(chat.id, { as: "task" }),
      promote(chat.id, { as: "knowledge" })
    ])
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 409, 409])
    await Promise.all(answers.map((r) => r.arrayBuffer()))
    const promotion = (await get(chat.id)).promotion
    expect(promotion).not.toBeNull()
    const knowledge = await page(await fx.get("/api/v1/knowledge", { labId: fx.lab.id, limit: 100 }), KnowledgeEntry)
    const tasks = await page(await fx.get("/api/v1/tasks", { labId: fx.lab.id, limit: 100 }), Task)
    const made = [
      ...knowledge.data.filter((k) => k.body === "Only once."),
      ...tasks.data.filter((t) => t.description === "Only once.")
    ]
    expect(made.map((m) => m.id)).toEqual([promotion?.ref])
  })

  it("422 for unknown fields and a bad target", async () => {
    const chat = await open("Bad promote")
    await data(await patch(chat.id, { outcome: "x" }), ChatDetail)
    await expectInvalid(await promote(chat.id, { as: "paper" }), "as")
    await expectInvalid(await promote(chat.id, {}), "as is required")
    await expectInvalid(await promote(chat.id, { as: "task", tags: ["x"] }), "tags is not a known field")
    await expectInvalid(await promote(chat.id, { as: "task", title: "" }), "title")
    expect((await get(chat.id)).promotion).toBeNull()
  })
})
