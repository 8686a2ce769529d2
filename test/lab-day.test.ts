import { Schema } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { json } from "./support/http.js"
import { startTestServer, type TestServer } from "./support/TestServer.js"

/**
 * A realistic day of a lab, through the API only: a template, two experiments
 * queued and run on a local pod, metrics and costs recorded, a paper through
 * the publish loop, knowledge promoted from a chat, a backup taken and
 * restored, and search finding all of it.
 */
let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
}, 120_000)
afterAll(() => server.close())

const Id = Schema.Struct({ id: Schema.String })
const WithStatus = Schema.Struct({ id: Schema.String, status: Schema.String })

/** Call the API as the lab's key and decode `data` with a schema. */
let token = ""
const call = async <A, I>(method: string, path: string, schema: Schema.Schema<A, I>, body?: unknown, expected?: number) => {
  const response = await server.request(method, path, { token, ...(body === undefined ? {} : { json: body }) })
  const payload = await json(response)
  if (expected !== undefined) expect(response.status, JSON.stringify(payload)).toBe(expected)
  else expect(response.status, JSON.stringify(payload)).toBeLessThan(300)
  return Schema.decodeUnknownSync(Schema.Struct({ data: schema }))(payload).data
}

const until = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 60_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

it("walks a day of a lab", async () => {
  // morning: the operator makes the lab and gives the team a key
  token = server.adminKey
  const lab = await call("POST", "/api/v1/labs", Id, { slug: "vision", name: "Vision Lab", plan: "team" }, 201)
  const key = await call("POST", "/api/v1/auth/keys", Schema.Struct({ key: Schema.String }), { name: "team", scopes: ["lab:vision:rw"] }, 201)
  token = key.key
  const labId = lab.id

  // a template and two experiments from it, queued in order
  const template = await call("POST", "/api/v1/experiments/templates", Id, {
    labId,
    name: "ResNet sweep",
    description: "Learning-rate sweep on the augmented dataset",
    defaults: { lr: 0.1, epochs: 3 }
  }, 201)
  const queue = await call("POST", "/api/v1/experiments/queues", Id, { labId, name: "gpu" }, 201)
  const first = await call("POST", "/api/v1/experiments", Id, {
    labId,
    templateId: template.id,
    name: "lr 0.1 baseline",
    hypothesis: "Cosine annealing beats step decay on augmented images"
  }, 201)
  const second = await call("POST", "/api/v1/experiments", Id, { labId, templateId: template.id, name: "lr 0.01", params: { lr: 0.01 } }, 201)
  await call("POST", "/api/v1/experiments/queues", WithStatus, { labId, queueId: queue.id, experimentId: first.id }, 202)
  await call("POST", "/api/v1/experiments/queues", WithStatus, { labId, queueId: queue.id, experimentId: second.id }, 202)

  // a local pod comes up; the scheduler starts the first experiment on it
  const pod = await call("POST", "/api/v1/pods", Id, { labId, name: "workstation", gpu: "RTX-4090", costPerHour: 0.9 }, 201)
  await call("POST", `/api/v1/pods/${pod.id}/start`, WithStatus, { labId }, 202)
  const experimentStatus = (id: string) => call("GET", `/api/v1/experiments/${id}?labId=${labId}`, WithStatus)
  await until("the first experiment to run", async () => ((await experimentStatus(first.id)).status === "running" ? true : undefined))
  expect((await experimentStatus(second.id)).status).toBe("queued")

  // it reports metrics and a cost, then completes; the second one runs next
  await call("POST", `/api/v1/experiments/${first.id}/metrics`, Schema.Unknown, {
    labId,
    points: [
      { key: "loss", value: 1.2, step: 1 },
      { key: "loss", value: 0.7, step: 2 },
      { key: "accuracy", value: 0.81, step: 2 }
    ]
  }, 201)
  await call("POST", "/api/v1/experiments/costs", Id, { labId, experimentId: first.id, amount: 0.42, category: "api", source: "openai" }, 201)
  await call("POST", `/api/v1/experiments/${first.id}/complete`, WithStatus, { labId })
  await until("the second experiment to run", async () => ((await experimentStatus(second.id)).status === "running" ? true : undefined))
  await call("POST", `/api/v1/experiments/${second.id}/complete`, WithStatus, { labId })
  const metrics = await call("GET", `/api/v1/experiments/${first.id}/metrics?labId=${labId}&key=loss`, Schema.Array(Schema.Struct({ value: Schema.Number })))
  expect(metrics.map((m) => m.value)).toEqual([1.2, 0.7])
  await call("POST", `/api/v1/pods/${pod.id}/stop`, WithStatus, { labId }, 202)

  // the day's costs come from the cost record and the pod's uptime
  const costs = await call("GET", `/api/v1/costs?labId=${labId}`, Schema.Unknown)
  const costsText = JSON.stringify(costs)
  expect(costsText).toContain("api")
  expect(costsText).toContain("compute")

  // a paper whose files are in the lab goes through the publish loop
  await call("POST", "/api/v1/files", Schema.Unknown, { labId, path: "/papers/augment/main.tex", content: "\\title{Augmentation schedules}\n" }, 201)
  const paper = await call("POST", "/api/v1/papers", Id, {
    labId,
    title: "Augmentation schedules for small vision models",
    abstract: "We compare cosine annealing with step decay under heavy augmentation.",
    authors: [{ name: "Ada Lovelace" }],
    files: ["/papers/augment/main.tex"]
  }, 201)
  await call("POST", `/api/v1/papers/${paper.id}/publish-loop`, Schema.Unknown, { labId }, 202)
  await until("the paper to be published", async () =>
    (await call("GET", `/api/v1/papers/${paper.id}?labId=${labId}`, WithStatus)).status === "published" ? true : undefined
  )

  // a chat concludes; its outcome becomes knowledge, once
  const chat = await call("POST", "/api/v1/chats", Id, { labId, title: "Why did lr 0.01 underfit?" }, 201)
  await call("POST", `/api/v1/chats/${chat.id}/messages`, Schema.Unknown, { labId, role: "user", content: "Why did the small learning rate underfit?" }, 201)
  await call("PATCH", `/api/v1/chats/${chat.id}`, Schema.Unknown, {
    labId,
    outcome: "Warmup is required: without warmup the small learning rate underfits within three epochs."
  })
  await call("POST", `/api/v1/chats/${chat.id}/promote`, Schema.Unknown, { labId, as: "knowledge", title: "Warmup matters" }, 201)
  const again = await server.request("POST", `/api/v1/chats/${chat.id}/promote`, { token, json: { labId, as: "knowledge" } })
  expect(again.status).toBe(409)

  // search finds the day's work
  const SearchHits = Schema.Array(Schema.Struct({ kind: Schema.String, ref: Schema.String }))
  const search = (q: string) => call("GET", `/api/v1/search?labId=${labId}&q=${encodeURIComponent(q)}`, SearchHits)
  expect((await search("cosine annealing")).map((h) => h.kind)).toEqual(expect.arrayContaining(["experiments", "papers"]))
  expect((await search("warmup")).some((h) => h.kind === "knowledge")).toBe(true)
  expect((await search("augmentation schedules")).some((h) => h.kind === "files" && h.ref === "/papers/augment/main.tex")).toBe(true)

  // a backup, a mistake, a restore: the lab is as it was
  const backup = await call("POST", "/api/v1/backups", WithStatus, { labId }, 202)
  await until("the backup to complete", async () =>
    (await call("GET", `/api/v1/backups/${backup.id}?labId=${labId}`, WithStatus)).status === "completed" ? true : undefined
  )
  await call("DELETE", `/api/v1/files?labId=${labId}&path=/papers/augment/main.tex`, Schema.Unknown)
  await call("POST", "/api/v1/knowledge", Id, { labId, title: "A wrong note", body: "Learning rates do not matter." }, 201)
  await call("POST", `/api/v1/backups/${backup.id}/restore`, Schema.Unknown, { labId }, 202)
  await until("the restore to complete", async () => {
    const restored = await call("GET", `/api/v1/backups/${backup.id}?labId=${labId}`, Schema.Struct({ restore: Schema.NullOr(Schema.Struct({ status: Schema.String })) }))
    return restored.restore?.status === "completed" ? true : undefined
  })
  const file = await call("GET", `/api/v1/files?labId=${labId}&path=/papers/augment/main.tex`, Schema.Struct({ content: Schema.String }))
  expect(file.content).toBe("\\title{Augmentation schedules}\n")
  expect(await search("wrong note")).toEqual([])
  expect((await search("warmup")).some((h) => h.kind === "knowledge")).toBe(true)
  expect((await call("GET", `/api/v1/papers/${paper.id}?labId=${labId}`, WithStatus)).status).toBe("published")
}, 300_000)
