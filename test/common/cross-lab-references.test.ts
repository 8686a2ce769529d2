/**
 * Every body field that names another resource names one of the same lab: an
 * id of another lab, or a missing one, is 422 validation_error naming the field
 * (the same answer for both, so other labs' ids leak nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createdId, expectInvalid, type Fixture, startFixture } from "../support/LabFixture.js"


let fx: Fixture
/** Resources of the other lab, made with its own key. */
let theirs: Record<"experiment" | "template" | "queue" | "project" | "paper" | "task" | "agent" | "chat", string>
/** Resources of the lab under test. */
let ours: { experiment: string; figure: string; queue: string; project: string; knowledge: string }

/** An id with the shape of this service's ids that names nothing. */
const missing = (prefix: string) => `${prefix}_0000000000000000`

const create = (path: string, body: Record<string, unknown>, labId: string, token: string) => createdId(fx, path, body, labId, token)

beforeAll(async () => {
  fx = await startFixture("xref")
  const other = (path: string, body: Record<string, unknown>) => create(path, body, fx.other.id, fx.stranger)
  theirs = {
    experiment: await other("/api/v1/experiments", { name: "theirs" }),
    template: await other("/api/v1/experiments/templates", { name: "theirs" }),
    queue: await other("/api/v1/experiments/queues", { name: "theirs" }),
    project: await other("/api/v1/projects", { name: "theirs" }),
    paper: await other("/api/v1/papers", { title: "theirs" }),
    task: await other("/api/v1/tasks", { title: "theirs" }),
    agent: await other("/api/v1/agents", { name: "theirs", model: "m" }),
    chat: await other("/api/v1/chats", { title: "theirs" })
  }
  const mine = (path: string, body: Record<string, unknown>) => create(path, body, fx.lab.id, fx.writer)
  const experiment = await mine("/api/v1/experiments", { name: "ours" })
  ours = {
    experiment,
    figure: await mine("/api/v1/figures", { title: "ours", path: "/figures/ours.png", experimentId: experiment }),
    queue: await mine("/api/v1/experiments/queues", { name: "ours" }),
    project: await mine("/api/v1/projects", { name: "ours" }),
    knowledge: await mine("/api/v1/knowledge", { title: "ours", body: "text" })
  }
}, 180_000)
afterAll(() => fx.close())

/** Both a foreign id and a missing one are 422 naming `field`. */
const refused = async (call: (id: string) => Promise<Response>, field: string, foreign: string, absent: string) => {
  for (const id of [foreign, absent]) expect(await expectInvalid(await call(id), `${field}: no `)).toContain(id.replace(/^chats\//, ""))
}

describe("figures", () => {
  it("experimentId names an experiment of the lab, on POST and PATCH", async () => {
    const post = (experimentId: string) => fx.post("/api/v1/figures", { labId: fx.lab.id, title: "f", url: "https://x.test/a.png", experimentId })
    await refused(post, "experimentId", theirs.experiment, missing("exp"))
    const patch = (experimentId: string) => fx.patch(`/api/v1/figures/${ours.figure}`, { labId: fx.lab.id, experimentId })
    await refused(patch, "experimentId", theirs.experiment, missing("exp"))
    expect((await patch(ours.experiment)).status).toBe(200)
  })
})

describe("experiments", () => {
  it("templateId and projectId name the lab's", async () => {
    const post = (body: Record<string, unknown>) => fx.post("/api/v1/experiments", { labId: fx.lab.id, name: "e", ...body })
    await refused((templateId) => post({ templateId }), "templateId", theirs.template, missing("tpl"))
    await refused((projectId) => post({ projectId }), "projectId", theirs.project, missing("prj"))
    const patch = (projectId: string) => fx.patch(`/api/v1/experiments/${ours.experiment}`, { labId: fx.lab.id, projectId })
    await refused(patch, "projectId", theirs.project, missing("prj"))
    expect((await patch(ours.project)).status).toBe(200)
  })

  it("an enqueue names a queue and an experiment of the lab", async () => {
    const draft = await create("/api/v1/experiments", { name: "draft" }, fx.lab.id, fx.writer)
    const enqueue = (queueId: string, experimentId: string) => fx.post("/api/v1/experiments/queues", { labId: fx.lab.id, queueId, experimentId })
    await refused((queueId) => enqueue(queueId, draft), "queueId", theirs.queue, missing("queue"))
    await refused((experimentId) => enqueue(ours.queue, experimentId), "experimentId", theirs.experiment, missing("exp"))
  })

  it("a cost record names an experiment of the lab", async () => {
    const post = (experimentId: string) =>
      fx.post("/api/v1/experiments/costs", { labId: fx.lab.id, experimentId, amount: 1, category: "api", source: "openai" })
    await refused(post, "experimentId", theirs.experiment, missing("exp"))
  })
})

describe("projects, surveys, memory, standups", () => {
  it("a project item names an experiment, paper or task of the lab", async () => {
    const add = (kind: string) => (ref: string) => fx.post(`/api/v1/projects/${ours.project}/items`, { labId: fx.lab.id, kind, ref })
    await refused(add("experiment"), "ref", theirs.experiment, missing("exp"))
    await refused(add("paper"), "ref", theirs.paper, missing("paper"))
    await refused(add("task"), "ref", theirs.task, missing("task"))
  })

  it("a survey links papers of the lab", async () => {
    const post = (paper: string) => fx.post("/api/v1/surveys", { labId: fx.lab.id, topic: "t", linkedPaperIds: [paper] })
    await refused(post, "linkedPaperIds", theirs.paper, missing("paper"))
  })

  it("a memory entry and an agent's standup name an agent of the lab", async () => {
    const memory = (agentId: string) => fx.post("/api/v1/memory", { labId: fx.lab.id, agentId, kind: "fact", content: "c" })
    await refused(memory, "agentId", theirs.agent, missing("agent"))
    const standup = (id: string) => fx.post("/api/v1/standups", { labId: fx.lab.id, author: { kind: "agent", id }, done: ["x"] })
    await refused(standup, "author.id", theirs.agent, missing("agent"))
  })
})

describe("free-text references", () => {
  it("a contribution's agentId, and a ref shaped like an id, name the lab's", async () => {
    const post = (body: Record<string, unknown>) => fx.post("/api/v1/contributions", { labId: fx.lab.id, kind: "analysis", summary: "s", ...body })
    await refused((agentId) => post({ agentId }), "agentId", theirs.agent, missing("agent"))
    await refused((ref) => post({ ref }), "ref", theirs.experiment, missing("exp"))
    // anything else is free text: a DOI, a path, a commit
    for (const ref of ["doi:10.1000/182", "/notes/a.md", "0123456789abcdef0123456789abcdef01234567", ours.experiment]) {
      expect((await post({ ref })).status, ref).toBe(201)
    }
  })

  it("a knowledge source's ref shaped like an id (paper_…, chats/chat_…) names the lab's, on POST and PATCH", async () => {
    const post = (ref: string) => fx.post("/api/v1/knowledge", { labId: fx.lab.id, title: "k", body: "b", sources: [{ ref }] })
    await refused(post, "sources.0.ref", theirs.paper, missing("paper"))
    await refused(post, "sources.0.ref", `chats/${theirs.chat}`, `chats/${missing("chat")}`)
    const patch = (ref: string) =>
      fx.patch(`/api/v1/knowledge/${ours.knowledge}`, { labId: fx.lab.id, sources: [{ title: "x" }, { ref }] })
    await refused(patch, "sources.1.ref", theirs.task, missing("task"))
    expect((await post("arXiv:2401.00001")).status).toBe(201)
  })
})
