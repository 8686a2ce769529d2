/**
 * The lab-work toolsets of the MCP edge (experiments, knowledge, memory, papers, datasets, chats) with the official
 * MCP SDK client over real HTTP: each tool is its REST route, so what a tool writes reads back through REST with the
 * same activity entry, the lifecycles refuse through a tool as through REST (`conflict`), and lists page by cursor.
 * On PGlite, and on PostgreSQL when E2E_DATABASE_URL is set (as every fixture test).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Agent } from "../../src/agents/Agent.js"
import { ChatDetail } from "../../src/chats/Chat.js"
import { Dataset } from "../../src/datasets/Dataset.js"
import { Experiment, Queue } from "../../src/experiments/Experiment.js"
import { KnowledgeEntry } from "../../src/knowledge/Knowledge.js"
import { MemoryEntry } from "../../src/memory/Memory.js"
import { Paper } from "../../src/papers/Paper.js"
import { Pod } from "../../src/pods/Pod.js"
import { data, type Fixture, findActivity, startFixture, useFixture, waitFor } from "../support/LabFixture.js"

let fx: Fixture
useFixture(() => startFixture("mcptools"), (started) => (fx = started))

let writer: Client
beforeAll(async () => {
  writer = await connect(fx.writer)
})
afterAll(() => writer.close())

type CallResult = Awaited<ReturnType<Client["callTool"]>>

async function connect(token: string, query = "") {
  const client = new Client({ name: "lab-service-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${fx.server.baseUrl}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } }
  })
  await client.connect(transport)
  return client
}

const ErrorEnvelope = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String, status: Schema.Number }) })
const WithId = Schema.Struct({ id: Schema.String })
const PageOfIds = Schema.Struct({ items: Schema.Array(WithId), nextCursor: Schema.NullOr(Schema.String) })

/** A tool's successful answer, decoded as `schema` (a failure shows its envelope). */
const answer = <A, I>(result: CallResult, schema: Schema.Schema<A, I>): A => {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(false)
  return Schema.decodeUnknownSync(schema)(result.structuredContent)
}

const call = (name: string, args: Record<string, unknown>, client = writer) => client.callTool({ name, arguments: args })

/** A tool's failure: the REST envelope's error. */
const failure = async (name: string, args: Record<string, unknown>) => {
  const result = await call(name, args)
  expect(result.isError).toBe(true)
  return Schema.decodeUnknownSync(ErrorEnvelope)(result.structuredContent).error
}

/** Every id a list tool answers, walked page by page with `limit`. */
const walkTool = async (name: string, args: Record<string, unknown>, limit: number) => {
  const ids: Array<string> = []
  let cursor: string | undefined
  let pages = 0
  for (;;) {
    const page = answer(await call(name, { ...args, limit, ...(cursor === undefined ? {} : { cursor }) }), PageOfIds)
    pages++
    expect(page.items.length).toBeLessThanOrEqual(limit)
    ids.push(...page.items.map((i) => i.id))
    if (page.nextCursor === null) return { ids, pages }
    cursor = page.nextCursor
  }
}

const rest = async <A, I>(path: string, schema: Schema.Schema<A, I>) => data(await fx.get(path, { labId: fx.lab.id }), schema)

describe("the lab-work toolsets", () => {
  it("are offered by toolset, read tools alone to a read-only key, with their hints and the REST bodies' fields", async () => {
    const names = async (token: string, query: string) => {
      const client = await connect(token, query)
      const { tools } = await client.listTools()
      await client.close()
      return tools.map((t) => t.name).sort()
    }
    expect(await names(fx.writer, "?toolsets=experiments")).toEqual([
      "create_experiment",
      "get_experiment",
      "list_experiments",
      "list_metrics",
      "list_queues",
      "log_metrics",
      "move_experiment",
      "queue_experiment",
      "update_experiment"
    ])
    expect(await names(fx.reader, "?toolsets=knowledge,memory,papers,datasets,chats")).toEqual([
      "get_chat",
      "get_dataset",
      "get_memory",
      "get_paper",
      "list_chats",
      "list_datasets",
      "list_knowledge",
      "list_papers",
      "read_knowledge",
      "recall"
    ])
    const { tools } = await writer.listTools()
    const tool = (name: string) => tools.find((t) => t.name === name)
    expect(tool("recall")?.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
    expect(tool("remember")?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false })
    expect(tool("move_experiment")?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true, openWorldHint: false })
    expect(tool("update_knowledge")?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true })
    expect(tool("create_experiment")?.inputSchema.properties).toHaveProperty("hypothesis")
    expect(tool("create_dataset")?.inputSchema.properties).toHaveProperty("uri")
    expect(tool("create_dataset")?.inputSchema.required).toEqual(expect.arrayContaining(["name", "format"]))
    expect(tool("promote_chat")?.inputSchema.required).toEqual(expect.arrayContaining(["chatId", "as"]))
  })

  it("experiments: created, refused out of order, queued, run on a pod, measured, paged and completed through tools", async () => {
    const created = answer(
      await call("create_experiment", { name: "baseline", hypothesis: "lr 0.01 converges", params: { lr: 0.01 } }),
      Experiment
    )
    expect(await rest(`/api/v1/experiments/${created.id}`, Experiment)).toMatchObject({ name: "baseline", status: "draft", params: { lr: 0.01 } })
    expect(findActivity(await fx.activity(), "experiment.created", created.id).actor).toBe(fx.writerId)

    // a draft has not run: it can neither be completed nor take metrics
    const early = await failure("move_experiment", { experimentId: created.id, to: "completed" })
    expect(early).toMatchObject({ code: "conflict", status: 409 })
    expect(await failure("log_metrics", { experimentId: created.id, points: [{ key: "loss", value: 1 }] })).toMatchObject({ code: "conflict" })

    const queue = await data(await fx.post("/api/v1/experiments/queues", { labId: fx.lab.id, name: "gpu" }), Queue, 201)
    const queues = answer(await call("list_queues", {}), Schema.Struct({ items: Schema.Array(Queue), nextCursor: Schema.NullOr(Schema.String) }))
    expect(queues.items.map((q) => q.id)).toContain(queue.id)
    const queued = answer(await call("queue_experiment", { experimentId: created.id, queueId: queue.id }), Experiment)
    expect(queued).toMatchObject({ status: "queued", queueId: queue.id })

    const pod = await data(await fx.post("/api/v1/pods", { labId: fx.lab.id, name: "local", costPerHour: 1 }), Pod, 201)
    await data(await fx.post(`/api/v1/pods/${pod.id}/start`, { labId: fx.lab.id }), Pod, 202)
    try {
      await waitFor("the experiment to run", () => rest(`/api/v1/experiments/${created.id}`, Experiment), (e) => e.status === "running", 20_000)
      const points = [1, 2, 3, 4, 5].map((step) => ({ key: "loss", value: 1 / step, step }))
      const logged = answer(await call("log_metrics", { experimentId: created.id, points }), Schema.Struct({ points: Schema.Array(Schema.Unknown) }))
      expect(logged.points).toHaveLength(5)
      expect(findActivity(await fx.activity(), "experiment.metrics_logged", created.id).actor).toBe(fx.writerId)

      const Points = Schema.Struct({ items: Schema.Array(Schema.Struct({ step: Schema.NullOr(Schema.Number) })), nextCursor: Schema.NullOr(Schema.String) })
      const first = answer(await call("list_metrics", { experimentId: created.id, key: "loss", limit: 2 }), Points)
      expect(first.items.map((p) => p.step)).toEqual([1, 2])
      const second = answer(await call("list_metrics", { experimentId: created.id, key: "loss", limit: 2, cursor: first.nextCursor }), Points)
      expect(second.items.map((p) => p.step)).toEqual([3, 4])
      expect(await failure("list_metrics", { experimentId: created.id, cursor: "garbage" })).toMatchObject({ code: "validation_error" })

      const done = answer(await call("move_experiment", { experimentId: created.id, to: "completed", reason: "converged" }), Experiment)
      expect(done).toMatchObject({ status: "completed", statusMessage: "converged" })
      // the same move again changes nothing (idempotent); another end is refused by the lifecycle
      expect(answer(await call("move_experiment", { experimentId: created.id, to: "completed" }), Experiment).status).toBe("completed")
      expect(await failure("move_experiment", { experimentId: created.id, to: "failed" })).toMatchObject({ code: "conflict" })
      expect(await rest(`/api/v1/experiments/${created.id}`, Experiment)).toMatchObject({ status: "completed", statusMessage: "converged" })
    } finally {
      // the pod is a local process: stopped and seen stopped, so none outlives the test
      await fx.post(`/api/v1/pods/${pod.id}/stop`, { labId: fx.lab.id })
      await waitFor("the pod to stop", () => rest(`/api/v1/pods/${pod.id}`, Pod), (p) => p.status === "stopped", 20_000)
    }
  }, 40_000)

  it("knowledge: written, read back through REST and the tool, updated, and listed page by page", async () => {
    const written = answer(
      await call("write_knowledge", { title: "Warm-up matters", body: "A 5% warm-up halves divergence.", tags: ["training"], sources: [{ ref: "arXiv:1706.02677" }] }),
      KnowledgeEntry
    )
    expect(await rest(`/api/v1/knowledge/${written.id}`, KnowledgeEntry)).toEqual(written)
    expect(findActivity(await fx.activity(), "knowledge.created", written.id).actor).toBe(fx.writerId)

    const updated = answer(await call("update_knowledge", { knowledgeId: written.id, tags: ["training", "lr"] }), KnowledgeEntry)
    expect(updated.tags).toEqual(["training", "lr"])
    expect(answer(await call("read_knowledge", { knowledgeId: written.id }), KnowledgeEntry)).toMatchObject({ body: written.body, tags: ["training", "lr"] })
    expect(await failure("read_knowledge", { knowledgeId: "kn_missing" })).toMatchObject({ code: "not_found" })

    for (const title of ["Second", "Third"]) await call("write_knowledge", { title, body: `${title} entry`, tags: ["walk"] })
    const walked = await walkTool("list_knowledge", {}, 2)
    expect(walked.ids).toHaveLength(3)
    expect(walked.ids.at(-1)).toBe(written.id)
    expect(walked.pages).toBe(2)
    expect((await walkTool("list_knowledge", { tag: "walk" }, 1)).ids).toHaveLength(2)
  })

  it("memory: an agent remembers through the tool; REST reads it back, recall finds it, an unknown agent is refused", async () => {
    const agent = await data(await fx.post("/api/v1/agents", { labId: fx.lab.id, name: "Scout", model: "m" }), Agent, 201)
    const remembered = answer(
      await call("remember", { agentId: agent.id, kind: "observation", content: "The loss plateaus after epoch 3.", tags: ["loss"] }),
      MemoryEntry
    )
    expect(remembered.importance).toBe(0.5)
    expect(await rest(`/api/v1/memory/${remembered.id}`, MemoryEntry)).toEqual(remembered)
    expect(findActivity(await fx.activity(), "memory.created", remembered.id).actor).toBe(fx.writerId)
    expect(answer(await call("get_memory", { memoryId: remembered.id }), MemoryEntry)).toEqual(remembered)
    const recalled = answer(await call("recall", { agentId: agent.id, kind: "observation" }), PageOfIds)
    expect(recalled.items.map((m) => m.id)).toEqual([remembered.id])
    expect(await failure("remember", { agentId: "agent_nobody", kind: "fact", content: "x" })).toMatchObject({ code: "validation_error" })

    expect(answer(await call("forget", { memoryId: remembered.id }), MemoryEntry)).toEqual(remembered)
    expect(findActivity(await fx.activity(), "memory.deleted", remembered.id).actor).toBe(fx.writerId)
    expect((await fx.get(`/api/v1/memory/${remembered.id}`, { labId: fx.lab.id })).status).toBe(404)
    expect(await failure("forget", { memoryId: remembered.id })).toMatchObject({ code: "not_found" })
  })

  it("papers: created and moved by hand; a move the lifecycle forbids is a conflict", async () => {
    const paper = answer(await call("create_paper", { title: "Warm-up", authors: [{ name: "Ada" }] }), Paper)
    expect(await rest(`/api/v1/papers/${paper.id}`, Paper)).toMatchObject({ title: "Warm-up", status: "draft", version: 1 })
    expect(findActivity(await fx.activity(), "paper.created", paper.id).actor).toBe(fx.writerId)

    expect(await failure("transition_paper", { paperId: paper.id, to: "accepted" })).toMatchObject({ code: "conflict", status: 409 })
    expect(await failure("transition_paper", { paperId: paper.id, to: "published" })).toMatchObject({ code: "conflict" })
    const submitted = answer(await call("transition_paper", { paperId: paper.id, to: "submitted", note: "to the workshop" }), Paper)
    expect(submitted.status).toBe("submitted")
    expect(findActivity(await fx.activity(), "paper.submitted", paper.id).data).toMatchObject({ from: "draft", to: "submitted", note: "to the workshop" })
    const updated = answer(await call("update_paper", { paperId: paper.id, abstract: "We study warm-up." }), Paper)
    expect(await rest(`/api/v1/papers/${paper.id}`, Paper)).toMatchObject({ abstract: "We study warm-up.", status: "submitted", updatedAt: updated.updatedAt })
    expect((await walkTool("list_papers", { status: "submitted" }, 1)).ids).toEqual([paper.id])
  })

  it("datasets: registered at a lab path through the tool, read back through REST; uri and path together are refused", async () => {
    const dataset = answer(await call("create_dataset", { name: "train", format: "csv", path: "/data/train.csv", rows: 1000 }), Dataset)
    expect(await rest(`/api/v1/datasets/${dataset.id}`, Dataset)).toEqual(dataset)
    expect(findActivity(await fx.activity(), "dataset.created", dataset.id).actor).toBe(fx.writerId)
    const both = await failure("create_dataset", { name: "x", format: "csv", path: "/data/x.csv", uri: "https://example.org/x.csv" })
    expect(both).toMatchObject({ code: "validation_error", message: expect.stringMatching(/^uri: give either uri or path/) })
    expect(await failure("create_dataset", { name: "TRAIN", format: "csv", uri: "s3://bucket/train.csv" })).toMatchObject({ code: "conflict" })
    const moved = answer(await call("update_dataset", { datasetId: dataset.id, uri: "s3://bucket/train.csv" }), Dataset)
    expect(moved).toMatchObject({ uri: "s3://bucket/train.csv", path: null, version: 2 })
    expect(answer(await call("get_dataset", { datasetId: dataset.id }), Dataset)).toEqual(moved)
    expect((await walkTool("list_datasets", { format: "csv" }, 5)).ids).toEqual([dataset.id])
  })

  it("chats: opened, a message appended, promoted to knowledge once its outcome is set, and only once", async () => {
    const chat = answer(await call("create_chat", { title: "Why does it diverge?" }), WithId)
    const message = answer(await call("add_chat_message", { chatId: chat.id, role: "assistant", content: "Try a warm-up." }), Schema.Struct({ seq: Schema.Number }))
    expect(message.seq).toBe(1)
    expect(findActivity(await fx.activity(), "chat.message_added", chat.id).actor).toBe(fx.writerId)

    expect(await failure("promote_chat", { chatId: chat.id, as: "knowledge" })).toMatchObject({ code: "conflict" })
    answer(await call("update_chat", { chatId: chat.id, outcome: "Use a 5% warm-up." }), ChatDetail)
    const Promoted = Schema.Struct({ as: Schema.Literal("knowledge"), entry: KnowledgeEntry })
    const promoted = answer(await call("promote_chat", { chatId: chat.id, as: "knowledge" }), Promoted)
    expect(await rest(`/api/v1/knowledge/${promoted.entry.id}`, KnowledgeEntry)).toMatchObject({ title: "Why does it diverge?", body: "Use a 5% warm-up." })
    expect(findActivity(await fx.activity(), "chat.promoted", chat.id).actor).toBe(fx.writerId)
    expect(await failure("promote_chat", { chatId: chat.id, as: "task" })).toMatchObject({ code: "conflict" })

    const detail = await rest(`/api/v1/chats/${chat.id}`, ChatDetail)
    expect(detail).toMatchObject({ messageCount: 1, promotion: { as: "knowledge", ref: promoted.entry.id } })
    expect(answer(await call("get_chat", { chatId: chat.id }), ChatDetail).messages.map((m) => m.content)).toEqual(["Try a warm-up."])
    expect((await walkTool("list_chats", {}, 1)).ids).toEqual([chat.id])
  })
})
