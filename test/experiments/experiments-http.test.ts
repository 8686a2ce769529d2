import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { CreatedApiKey } from "../../src/auth/ApiKey.js"
import { CostReport } from "../../src/costs/Cost.js"
import { CostPage } from "../../src/experiments/Api.js"
import { Experiment, ExperimentCost, MetricPoint, Queue, Template } from "../../src/experiments/Experiment.js"
import { Lab } from "../../src/labs/Lab.js"
import { Pod } from "../../src/pods/Pod.js"
import { json } from "../support/http.js"
import {
  createPod,
  data,
  EXPERIMENTS,
  expectError,
  expectInvalid,
  findActivity,
  type Fixture,
  getExperiment,
  getPod,
  MISSING,
  page,
  pidOf,
  processExists,
  runningPod,
  sleep,
  startFixture,
  useFixture,
  startPod,
  stopPod,
  waitFor,
  waitForExperiment,
  waitForPod,
  walk
} from "../support/ComputeSupport.js"

let fx: Fixture
useFixture(() => startFixture("exps"), (started) => (fx = started))

const TEMPLATES = `${EXPERIMENTS}/templates`
const QUEUES = `${EXPERIMENTS}/queues`
const COSTS = `${EXPERIMENTS}/costs`

type Body = Record<string, unknown>

/** A lab of its own (with a read-write key), so its scheduler sees only its own pods and queues. */
const ownLab = async (slug: string) => {
  const lab = await data(
    await fx.server.request("POST", "/api/v1/labs", { token: fx.admin, json: { slug, name: slug, plan: "team" } }),
    Lab,
    201
  )
  const created = await data(
    await fx.server.request("POST", "/api/v1/auth/keys", { token: fx.admin, json: { name: slug, scopes: [`lab:${slug}:rw`] } }),
    CreatedApiKey,
    201
  )
  const key = created.key
  const own: Fixture = {
    ...fx,
    lab,
    writer: key,
    writerId: created.id,
    get: (path, params, token = key) => fx.get(path, params, token),
    del: (path, params, token = key) => fx.del(path, params, token),
    post: (path, body, token = key) => fx.post(path, body, token),
    patch: (path, body, token = key) => fx.patch(path, body, token),
    activity: (labId = lab.id) => fx.activity(labId)
  }
  return { lab, key, own }
}

const createExperiment = async (body: Body, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(EXPERIMENTS, { labId, ...body }, token), Experiment, 201)
const createTemplate = async (body: Body, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(TEMPLATES, { labId, ...body }, token), Template, 201)
const createQueue = async (name: string, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(QUEUES, { labId, name }, token), Queue, 201)
const enqueue = async (queueId: string, experimentId: string, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(QUEUES, { labId, queueId, experimentId }, token), Experiment, 202)
const act = (id: string, verb: string, body: Body = {}, labId = fx.lab.id, token = fx.writer) =>
  fx.post(`${EXPERIMENTS}/${id}/${verb}`, { labId, ...body }, token)
const logMetrics = (id: string, points: ReadonlyArray<Body>, labId = fx.lab.id, token = fx.writer) =>
  fx.post(`${EXPERIMENTS}/${id}/metrics`, { labId, points }, token)
const costPage = async (response: Response) => {
  const body = await json(response)
  expect(response.status, JSON.stringify(body)).toBe(200)
  return Schema.decodeUnknownSync(CostPage)(body)
}

// ---------------------------------------------------------------------------

describe("templates: GET/POST /api/v1/experiments/templates", () => {
  it("creates (201) and lists a template with its paramsSchema and defaults", async () => {
    const template = await createTemplate({
      name: "LR sweep",
      description: "sweep the learning rate",
      paramsSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", properties: { lr: { type: "number", maximum: 1 } } },
      defaults: { lr: 0.01, optimizer: "adam" }
    })
    expect(template).toMatchObject({ labId: fx.lab.id, name: "LR sweep", defaults: { lr: 0.01, optimizer: "adam" } })
    expect(template.id).toMatch(/^tpl_/)
    const listed = await page(await fx.get(TEMPLATES, { labId: fx.lab.id }), Template)
    expect(listed.data[0]).toEqual(template)
    const bare = await createTemplate({ name: "bare" })
    expect(bare).toMatchObject({ description: "", paramsSchema: {}, defaults: {} })
    expect((await walk(fx, TEMPLATES, { labId: fx.lab.id }, Template, 1)).map((t) => t.id)).toEqual([bare.id, template.id])
    findActivity(await fx.activity(), "experiment_template.created", template.id)
  })

  it("422: unknown fields, a paramsSchema it cannot enforce, defaults that break the schema, bad sizes", async () => {
    const ok = { labId: fx.lab.id, name: "t" }
    await expectInvalid(await fx.post(TEMPLATES, { ...ok, params: {} }), "params is not a known field")
    await expectInvalid(await fx.post(TEMPLATES, { ...ok, id: "tpl_x" }), "id is not a known field")
    await expectInvalid(await fx.post(TEMPLATES, { labId: fx.lab.id }), "name is required")
    await expectInvalid(await fx.post(TEMPLATES, { ...ok, paramsSchema: [] }), "paramsSchema")
    await expectInvalid(await fx.post(TEMPLATES, { ...ok, paramsSchema: { properties: { lr: { type: "float" } } } }), "paramsSchema.properties.lr.type")
    await expectInvalid(await fx.post(TEMPLATES, { ...ok, paramsSchema: { required: "lr" } }), "paramsSchema.required")
    await expectInvalid(
      await fx.post(TEMPLATES, { ...ok, paramsSchema: { properties: { lr: { type: "number", maximum: 1 } } }, defaults: { lr: 5 } }),
      "defaults.lr: must be at most 1"
    )
    await expectInvalid(await fx.post(TEMPLATES, { ...ok, defaults: { blob: "x".repeat(70_000) } }), "defaults")
  })

  it("403 for a foreign lab and a read-only key writing; 404 for the operator naming a missing lab", async () => {
    await expectError(await fx.get(TEMPLATES, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(TEMPLATES, { labId: fx.lab.id, name: "t" }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(TEMPLATES, { labId: fx.lab.id, name: "t" }, fx.reader), 403, "forbidden")
    await page(await fx.get(TEMPLATES, { labId: fx.lab.id }, fx.reader), Template)
    await expectError(await fx.get(TEMPLATES, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
    await expectError(await fx.post(TEMPLATES, { labId: "no-such-lab", name: "t" }, fx.admin), 404, "not_found")
  })
})

describe("experiments: GET/POST /api/v1/experiments, GET/PATCH /api/v1/experiments/{id}", () => {
  it("creates a draft (201) with server-owned fields, reads it back, lists it with filters", async () => {
    const e = await createExperiment({ name: "baseline", description: "resnet", hypothesis: "it converges", params: { lr: 0.1, layers: [64, 64] } })
    expect(e).toMatchObject({
      labId: fx.lab.id,
      name: "baseline",
      description: "resnet",
      hypothesis: "it converges",
      params: { lr: 0.1, layers: [64, 64] },
      status: "draft",
      statusMessage: null,
      templateId: null,
      queueId: null,
      podId: null,
      projectId: null,
      cost: {},
      queuedAt: null,
      startedAt: null,
      finishedAt: null
    })
    expect(e.id).toMatch(/^exp_[0-9a-z]{16}$/)
    expect(await getExperiment(fx, e.id)).toEqual(e)
    expect(await data(await fx.get(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.slug }, fx.reader), Experiment)).toEqual(e)

    const listed = await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, status: "draft" }), Experiment)
    expect(listed.data[0]?.id).toBe(e.id)
    expect((await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, status: "running" }), Experiment)).data.map((x) => x.id)).not.toContain(e.id)
    const since = await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, from: e.createdAt.toISOString() }), Experiment)
    expect(since.data.map((x) => x.id)).toContain(e.id)
    const before = await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, to: e.createdAt.toISOString() }), Experiment)
    expect(before.data.map((x) => x.id)).not.toContain(e.id)
    expect(findActivity(await fx.activity(), "experiment.created", e.id)).toMatchObject({ actor: fx.writerId })
  })

  it("creates from a template: copies name, description and default params; body values override; params are checked", async () => {
    const template = await createTemplate({
      name: "sweep",
      description: "template description",
      paramsSchema: {
        properties: { lr: { type: "number", minimum: 0, maximum: 1 }, epochs: { type: "integer" }, opt: { enum: ["adam", "sgd"] } },
        required: ["lr"],
        additionalProperties: false
      },
      defaults: { lr: 0.01, epochs: 3 }
    })
    const copied = await createExperiment({ templateId: template.id })
    expect(copied).toMatchObject({ name: "sweep", description: "template description", params: { lr: 0.01, epochs: 3 }, templateId: template.id })
    const overridden = await createExperiment({ templateId: template.id, name: "fast", description: "mine", params: { lr: 0.5, opt: "sgd" } })
    expect(overridden).toMatchObject({ name: "fast", description: "mine", params: { lr: 0.5, epochs: 3, opt: "sgd" } })
    const filtered = await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, templateId: template.id }), Experiment)
    expect(filtered.data.map((x) => x.id)).toEqual([overridden.id, copied.id])

    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, templateId: template.id, params: { lr: 2 } }), "params.lr: must be at most 1")
    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, templateId: template.id, params: { epochs: 1.5 } }), "params.epochs: must be of type integer")
    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, templateId: template.id, params: { opt: "rmsprop" } }), "params.opt")
    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, templateId: template.id, params: { momentum: 0.9 } }), "params.momentum is not a parameter")
    // PATCH checks params against the template too
    await expectInvalid(await fx.patch(`${EXPERIMENTS}/${copied.id}`, { labId: fx.lab.id, params: { epochs: 2 } }), "params.lr is required")
    const patched = await data(await fx.patch(`${EXPERIMENTS}/${copied.id}`, { labId: fx.lab.id, params: { lr: 0.2 } }), Experiment)
    expect(patched.params).toEqual({ lr: 0.2 })

    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, templateId: MISSING }), "templateId: no template")
    // a template of another lab is not one of this lab's
    const foreign = await createTemplate({ name: "theirs" }, fx.other.id, fx.stranger)
    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, templateId: foreign.id }), "templateId: no template")
  })

  it("422: unknown and server-owned fields, missing name, bad values and sizes, naming the field", async () => {
    const ok = { labId: fx.lab.id, name: "x" }
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, status: "running" }), "status is not a known field")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, cost: 5 }), "cost is not a known field")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, podId: "pod_x" }), "podId is not a known field")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, queueId: "queue_x" }), "queueId is not a known field")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, startedAt: "2026-01-01T00:00:00Z" }), "startedAt is not a known field")
    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id }), "name is required")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, name: " " }), "name")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, name: "n".repeat(201) }), "name")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, hypothesis: "h".repeat(20_001) }), "hypothesis")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, params: [1, 2] }), "params")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, params: "lr=1" }), "params")
    await expectInvalid(await fx.post(EXPERIMENTS, { ...ok, params: { big: "x".repeat(70_000) } }), "params must be at most")
    await expectInvalid(await fx.get(EXPERIMENTS, { labId: fx.lab.id, status: "paused" }), "status")
    await expectInvalid(await fx.get(EXPERIMENTS, { labId: fx.lab.id, from: "yesterday" }), "from")
    const e = await createExperiment({ name: "patchable" })
    await expectInvalid(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, status: "running" }), "status is not a known field")
    await expectInvalid(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, templateId: "tpl_x" }), "templateId is not a known field")
    await expectInvalid(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, name: "" }), "name")
  })

  it("PATCH changes fields with an activity entry; no change is a no-op", async () => {
    const e = await createExperiment({ name: "draft one", params: { a: 1 } })
    const patched = await data(
      await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, name: "renamed", hypothesis: "h2", params: { a: 2 } }),
      Experiment
    )
    expect(patched).toMatchObject({ name: "renamed", hypothesis: "h2", params: { a: 2 }, status: "draft" })
    expect(patched.updatedAt.getTime()).toBeGreaterThanOrEqual(e.updatedAt.getTime())
    expect(findActivity(await fx.activity(), "experiment.updated", e.id).data).toEqual({ fields: ["name", "hypothesis", "params"] })
    expect(await data(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id }), Experiment)).toEqual(patched)
  })

  it("404 for a missing id, 422 for a missing project; 403 for a foreign lab or a read-only key; 404 for the operator naming a missing lab", async () => {
    const e = await createExperiment({ name: "guarded" })
    await expectError(await fx.get(`${EXPERIMENTS}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.patch(`${EXPERIMENTS}/${MISSING}`, { labId: fx.lab.id, name: "x" }), 404, "not_found")
    await expectError(await fx.get(`${EXPERIMENTS}/${e.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, name: "x" }, fx.stranger), 403, "forbidden")
    await expectError(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, name: "x" }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(EXPERIMENTS, { labId: fx.lab.id, name: "x" }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(EXPERIMENTS, { labId: fx.lab.id, name: "x" }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(EXPERIMENTS, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(EXPERIMENTS, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
    await expectError(await fx.get(`${EXPERIMENTS}/${e.id}`, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
    await expectInvalid(await fx.post(EXPERIMENTS, { labId: fx.lab.id, name: "x", projectId: MISSING }), "projectId: no project")
    await expectInvalid(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, projectId: MISSING }), "projectId: no project")
  })
})

describe("lifecycle actions: POST /api/v1/experiments/{id}/cancel|complete|fail (extensions)", () => {
  it("draft → cancelled with the reason; repeating is a no-op; other moves from a final state are 409", async () => {
    const e = await createExperiment({ name: "abandoned" })
    await expectError(await act(e.id, "complete"), 409, "conflict")
    const failMessage = await expectError(await act(e.id, "fail"), 409, "conflict")
    expect(failMessage).toContain("draft")
    const cancelled = await data(await act(e.id, "cancel", { reason: "superseded" }), Experiment)
    expect(cancelled).toMatchObject({ status: "cancelled", statusMessage: "superseded" })
    expect(cancelled.finishedAt).not.toBeNull()
    expect(await data(await act(e.id, "cancel"), Experiment)).toEqual(cancelled)
    expect(await expectError(await act(e.id, "complete"), 409, "conflict")).toContain("final state")
    // params of a finished experiment are frozen; its name is not
    await expectError(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, params: { a: 1 } }), 409, "conflict")
    expect(await data(await fx.patch(`${EXPERIMENTS}/${e.id}`, { labId: fx.lab.id, name: "abandoned (old)" }), Experiment)).toMatchObject({
      name: "abandoned (old)",
      status: "cancelled"
    })
    const entries = await fx.activity()
    expect(findActivity(entries, "experiment.cancelled", e.id)).toMatchObject({ actor: fx.writerId, data: { from: "draft", reason: "superseded" } })
    expect(entries.filter((x) => x.ref === e.id && x.kind === "experiment.cancelled")).toHaveLength(1)
  })

  it("404, 403 and 422 on the actions", async () => {
    const e = await createExperiment({ name: "acted on" })
    for (const verb of ["cancel", "complete", "fail"]) {
      await expectError(await act(MISSING, verb), 404, "not_found")
      await expectError(await act(e.id, verb, {}, fx.lab.id, fx.reader), 403, "forbidden")
      await expectError(await act(e.id, verb, {}, fx.lab.id, fx.stranger), 403, "forbidden")
      await expectError(await act(e.id, verb, {}, fx.other.id, fx.stranger), 404, "not_found")
      await expectInvalid(await act(e.id, verb, { status: "completed" }), "status is not a known field")
      await expectInvalid(await act(e.id, verb, { reason: "r".repeat(2_001) }), "reason")
    }
    expect((await getExperiment(fx, e.id)).status).toBe("draft")
  })
})

describe("queues: GET/POST /api/v1/experiments/queues", () => {
  it("creates a queue (201), enqueues drafts (202 queued), shows length and waiting time; FIFO order is kept", async () => {
    const queue = await createQueue("cpu")
    expect(queue).toMatchObject({ labId: fx.lab.id, name: "cpu", length: 0, running: 0, waitingSeconds: 0, oldestQueuedAt: null, nextExperimentId: null })
    expect(queue.id).toMatch(/^queue_/)
    expect(await expectError(await fx.post(QUEUES, { labId: fx.lab.id, name: "cpu" }), 409, "conflict")).toContain("cpu")

    const a = await createExperiment({ name: "first" })
    const b = await createExperiment({ name: "second" })
    const queued = await enqueue(queue.id, a.id)
    expect(queued).toMatchObject({ status: "queued", queueId: queue.id })
    expect(queued.queuedAt).not.toBeNull()
    // again: a no-op, 202 with it as it is
    expect(await enqueue(queue.id, a.id)).toEqual(queued)
    await enqueue(queue.id, b.id)
    await sleep(50)
    const listed = (await page(await fx.get(QUEUES, { labId: fx.lab.id }), Queue)).data.find((q) => q.id === queue.id)
    expect(listed).toMatchObject({ length: 2, running: 0, nextExperimentId: a.id })
    expect(listed?.waitingSeconds).toBeGreaterThan(0)
    expect(listed?.oldestQueuedAt?.toISOString()).toBe(queued.queuedAt?.toISOString())
    const inQueue = await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, queueId: queue.id, status: "queued" }), Experiment)
    expect(inQueue.data.map((x) => x.id).sort()).toEqual([a.id, b.id].sort())
    expect(findActivity(await fx.activity(), "experiment.queued", a.id).data).toMatchObject({ queueId: queue.id, position: 1 })
    findActivity(await fx.activity(), "experiment_queue.created", queue.id)

    // params may still change while queued
    expect((await data(await fx.patch(`${EXPERIMENTS}/${a.id}`, { labId: fx.lab.id, params: { x: 1 } }), Experiment)).params).toEqual({ x: 1 })

    // queued → cancelled leaves the queue
    await data(await act(b.id, "cancel"), Experiment)
    await data(await act(a.id, "cancel"), Experiment)
    const empty = (await page(await fx.get(QUEUES, { labId: fx.lab.id }), Queue)).data.find((q) => q.id === queue.id)
    expect(empty).toMatchObject({ length: 0, waitingSeconds: 0, nextExperimentId: null })
  })

  it("409: enqueue what is not a draft, or what waits in another queue; 422: a missing queue or experiment", async () => {
    const q1 = await createQueue("q-one")
    const q2 = await createQueue("q-two")
    const e = await createExperiment({ name: "wanderer" })
    await enqueue(q1.id, e.id)
    expect(await expectError(await fx.post(QUEUES, { labId: fx.lab.id, queueId: q2.id, experimentId: e.id }), 409, "conflict")).toContain(q1.id)
    await data(await act(e.id, "cancel"), Experiment)
    expect(await expectError(await fx.post(QUEUES, { labId: fx.lab.id, queueId: q1.id, experimentId: e.id }), 409, "conflict")).toContain("cancelled")
    const d = await createExperiment({ name: "draft" })
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, queueId: MISSING, experimentId: d.id }), "queueId: no queue")
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, queueId: q1.id, experimentId: MISSING }), "experimentId: no experiment")
    const theirs = await createQueue("theirs", fx.other.id, fx.stranger)
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, queueId: theirs.id, experimentId: d.id }), "queueId: no queue")
    expect((await getExperiment(fx, d.id)).status).toBe("draft")
  })

  it("422 for a body that is neither kind of request, or both; 403 for a foreign lab and a read-only key", async () => {
    const q = await createQueue("q-valid")
    const e = await createExperiment({ name: "v" })
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id }), "queueId is required")
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, queueId: q.id }), "experimentId is required")
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, name: "x", queueId: q.id, experimentId: e.id }), "not both")
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, name: "x", priority: 1 }), "priority is not a known field")
    await expectInvalid(await fx.post(QUEUES, { labId: fx.lab.id, name: "n".repeat(101) }), "name")
    await expectInvalid(await fx.get(QUEUES, { labId: fx.lab.id, limit: 0 }), "limit")
    await expectError(await fx.post(QUEUES, { labId: fx.lab.id, name: "x" }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(QUEUES, { labId: fx.lab.id, queueId: q.id, experimentId: e.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(QUEUES, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await page(await fx.get(QUEUES, { labId: fx.lab.id }, fx.reader), Queue)
    await expectError(await fx.get(QUEUES, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
  })
})

describe("metrics: POST/GET /api/v1/experiments/{id}/metrics (extensions)", () => {
  it("409 before the experiment runs; 404, 403 and 422", async () => {
    const e = await createExperiment({ name: "not yet" })
    expect(await expectError(await logMetrics(e.id, [{ key: "loss", value: 1 }]), 409, "conflict")).toContain("draft")
    await expectError(await logMetrics(MISSING, [{ key: "loss", value: 1 }]), 404, "not_found")
    await expectError(await fx.get(`${EXPERIMENTS}/${MISSING}/metrics`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await logMetrics(e.id, [{ key: "loss", value: 1 }], fx.lab.id, fx.reader), 403, "forbidden")
    await expectError(await logMetrics(e.id, [{ key: "loss", value: 1 }], fx.lab.id, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(`${EXPERIMENTS}/${e.id}/metrics`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectInvalid(await logMetrics(e.id, []), "points")
    await expectInvalid(await logMetrics(e.id, [{ key: "loss" }]), "points.0.value is required")
    await expectInvalid(await logMetrics(e.id, [{ key: "loss", value: "1" }]), "points.0.value")
    await expectInvalid(await logMetrics(e.id, [{ key: "loss", value: 1, unit: "nats" }]), "points.0.unit is not a known field")
    await expectInvalid(await logMetrics(e.id, [{ key: "bad key!", value: 1 }]), "points.0.key")
    await expectInvalid(await logMetrics(e.id, [{ key: "loss", value: 1, step: -1 }]), "points.0.step")
    await expectInvalid(await logMetrics(e.id, [{ key: "loss", value: 1, timestamp: "noon" }]), "points.0.timestamp")
    await expectInvalid(await logMetrics(e.id, Array.from({ length: 1_001 }, () => ({ key: "loss", value: 1 }))), "points")
    await expectInvalid(await fx.get(`${EXPERIMENTS}/${e.id}/metrics`, { labId: fx.lab.id, key: "bad key!" }), "key")
    await expectInvalid(await fx.get(`${EXPERIMENTS}/${e.id}/metrics`, { labId: fx.lab.id, cursor: "garbage" }), "cursor")
    expect((await page(await fx.get(`${EXPERIMENTS}/${e.id}/metrics`, { labId: fx.lab.id }, fx.reader), MetricPoint)).data).toEqual([])
  })
})

describe("experiment costs: GET/POST /api/v1/experiments/costs", () => {
  it("records costs (201) and lists them with totals by currency and category over all pages", async () => {
    const e = await createExperiment({ name: "costly" })
    const f = await createExperiment({ name: "cheap" })
    const first = await data(
      await fx.post(COSTS, { labId: fx.lab.id, experimentId: e.id, amount: 1.25, category: "api", source: "openai", description: "gpt calls" }),
      ExperimentCost,
      201
    )
    expect(first).toMatchObject({ labId: fx.lab.id, experimentId: e.id, amount: 1.25, currency: "USD", category: "api", source: "openai", origin: "manual" })
    await data(await fx.post(COSTS, { labId: fx.lab.id, experimentId: e.id, amount: 0.5, category: "storage", source: "s3" }), ExperimentCost, 201)
    await data(await fx.post(COSTS, { labId: fx.lab.id, experimentId: e.id, amount: 2, currency: "EUR", category: "compute", source: "lambda" }), ExperimentCost, 201)
    await data(await fx.post(COSTS, { labId: fx.lab.id, experimentId: f.id, amount: 0.1, category: "api", source: "openai" }), ExperimentCost, 201)

    const one = await costPage(await fx.get(COSTS, { labId: fx.lab.id, experimentId: e.id, limit: 1 }))
    expect(one.data).toHaveLength(1)
    expect(one.meta.has_more).toBe(true)
    expect(one.meta.totals).toEqual([
      { currency: "EUR", total: 2, compute: 2, api: 0, storage: 0, count: 1 },
      { currency: "USD", total: 1.75, compute: 0, api: 1.25, storage: 0.5, count: 2 }
    ])
    const api = await costPage(await fx.get(COSTS, { labId: fx.lab.id, category: "api" }))
    expect(api.meta.totals).toEqual([{ currency: "USD", total: 1.35, compute: 0, api: 1.35, storage: 0, count: 2 }])
    const all = await walk(fx, COSTS, { labId: fx.lab.id, experimentId: e.id }, ExperimentCost, 2)
    expect(all).toHaveLength(3)

    expect((await getExperiment(fx, e.id)).cost).toEqual({ EUR: 2, USD: 1.75 })
    expect((await getExperiment(fx, f.id)).cost).toEqual({ USD: 0.1 })
    expect(findActivity(await fx.activity(), "experiment.cost_recorded", e.id).data).toMatchObject({ amount: 2, currency: "EUR", category: "compute" })
  })

  it("filters by when the cost was incurred", async () => {
    const e = await createExperiment({ name: "dated" })
    await data(
      await fx.post(COSTS, { labId: fx.lab.id, experimentId: e.id, amount: 3, category: "storage", source: "disk", incurredAt: "2025-03-01T10:00:00Z" }),
      ExperimentCost,
      201
    )
    const march = await costPage(await fx.get(COSTS, { labId: fx.lab.id, from: "2025-03-01T00:00:00Z", to: "2025-03-02T00:00:00Z" }))
    expect(march.data.map((c) => c.experimentId)).toEqual([e.id])
    expect(march.meta.totals).toEqual([{ currency: "USD", total: 3, compute: 0, api: 0, storage: 3, count: 1 }])
  })

  it("422, 404 and 403", async () => {
    const e = await createExperiment({ name: "guarded costs" })
    const ok = { labId: fx.lab.id, experimentId: e.id, amount: 1, category: "api", source: "x" }
    await expectInvalid(await fx.post(COSTS, { ...ok, amount: -1 }), "amount")
    await expectInvalid(await fx.post(COSTS, { ...ok, amount: "1" }), "amount")
    await expectInvalid(await fx.post(COSTS, { ...ok, category: "gpu" }), "category")
    await expectInvalid(await fx.post(COSTS, { ...ok, currency: "dollars" }), "currency")
    await expectInvalid(await fx.post(COSTS, { ...ok, origin: "pod" }), "origin is not a known field")
    await expectInvalid(await fx.post(COSTS, { ...ok, id: "cost_x" }), "id is not a known field")
    await expectInvalid(await fx.post(COSTS, { labId: fx.lab.id, experimentId: e.id, amount: 1, category: "api" }), "source is required")
    await expectInvalid(await fx.get(COSTS, { labId: fx.lab.id, category: "gpu" }), "category")
    await expectInvalid(await fx.post(COSTS, { ...ok, experimentId: MISSING }), "experimentId: no experiment")
    await expectError(await fx.get(COSTS, { labId: fx.lab.id, experimentId: MISSING }), 404, "not_found")
    // the other lab's key naming this lab's experiment in its own lab
    await expectInvalid(await fx.post(COSTS, { ...ok, labId: fx.other.id }, fx.stranger), "experimentId: no experiment")
    await expectError(await fx.post(COSTS, ok, fx.reader), 403, "forbidden")
    await expectError(await fx.post(COSTS, ok, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(COSTS, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await costPage(await fx.get(COSTS, { labId: fx.lab.id }, fx.reader))
    await expectError(await fx.get(COSTS, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
  })
})

describe("a day in the lab: two experiments queued and run in order on a local pod", () => {
  it("runs them FIFO, records metrics and costs, and /costs shows pod uptime and the cost records", async () => {
    const { lab, key, own } = await ownLab("exps-day")
    const labId = lab.id
    const post = (path: string, body: Body) => fx.post(path, { labId, ...body }, key)

    const template = await data(
      await post(TEMPLATES, {
        name: "lr sweep",
        paramsSchema: { properties: { lr: { type: "number", minimum: 0, maximum: 1 }, epochs: { type: "integer" } }, required: ["lr"] },
        defaults: { lr: 0.01, epochs: 2 }
      }),
      Template,
      201
    )
    const queue = await data(await post(QUEUES, { name: "gpu" }), Queue, 201)
    const first = await data(await post(EXPERIMENTS, { templateId: template.id, name: "baseline", hypothesis: "lr 0.01 converges" }), Experiment, 201)
    const second = await data(await post(EXPERIMENTS, { templateId: template.id, params: { lr: 0.1 } }), Experiment, 201)
    expect(second).toMatchObject({ name: "lr sweep", params: { lr: 0.1, epochs: 2 } })

    // queued before any pod runs: they wait
    await data(await post(QUEUES, { queueId: queue.id, experimentId: first.id }), Experiment, 202)
    await data(await post(QUEUES, { queueId: queue.id, experimentId: second.id }), Experiment, 202)
    await sleep(200)
    expect((await getExperiment(own, first.id, labId)).status).toBe("queued")

    // a pod at 3600 USD/h (1 USD a second) starts: the first experiment starts on it
    const pod = await data(await post("/api/v1/pods", { name: "a100", gpu: "A100", costPerHour: 3600 }), Pod, 201)
    await data(await fx.post(`/api/v1/pods/${pod.id}/start`, { labId }, key), Pod, 202)
    const running = await waitForPod(own, pod.id, "running", labId)
    expect(processExists(pidOf(running))).toBe(true)
    const one = await waitFor("the first to start", () => getExperiment(own, first.id, labId), (e) => e.status === "running")
    expect(one).toMatchObject({ podId: pod.id, queueId: queue.id })
    expect(one.startedAt).not.toBeNull()
    expect((await getExperiment(own, second.id, labId)).status).toBe("queued")
    const q = (await page(await fx.get(QUEUES, { labId }, key), Queue)).data[0]
    expect(q).toMatchObject({ id: queue.id, length: 1, running: 1, nextExperimentId: second.id })

    // params are frozen while it runs; metrics and costs are recorded
    expect(await expectError(await fx.patch(`${EXPERIMENTS}/${first.id}`, { labId, params: { lr: 0.5 } }, key), 409, "conflict")).toContain("running")
    await data(await fx.patch(`${EXPERIMENTS}/${first.id}`, { labId, description: "notes while running" }, key), Experiment)
    const points = await data(
      await logMetrics(first.id, [
        { key: "loss", value: 2.3, step: 1 },
        { key: "loss", value: 1.1, step: 2 },
        { key: "accuracy", value: 0.61, step: 2, timestamp: "2026-01-01T00:00:00Z" },
        { key: "loss", value: 0.7, step: 3 }
      ], labId, key),
      Schema.Array(MetricPoint),
      201
    )
    expect(points).toHaveLength(4)
    expect(points[2]).toMatchObject({ experimentId: first.id, key: "accuracy", value: 0.61, step: 2 })
    expect(points[2]?.timestamp.toISOString()).toBe("2026-01-01T00:00:00.000Z")
    const loss = await page(await fx.get(`${EXPERIMENTS}/${first.id}/metrics`, { labId, key: "loss" }, key), MetricPoint)
    expect(loss.data.map((p) => [p.step, p.value])).toEqual([[1, 2.3], [2, 1.1], [3, 0.7]])
    const paged = await page(await fx.get(`${EXPERIMENTS}/${first.id}/metrics`, { labId, limit: 3 }, key), MetricPoint)
    expect(paged.data.map((p) => p.key)).toEqual(["loss", "loss", "accuracy"])
    expect(paged.meta.has_more).toBe(true)
    const rest = await page(
      await fx.get(`${EXPERIMENTS}/${first.id}/metrics`, { labId, limit: 3, cursor: paged.meta.next_cursor ?? undefined }, key),
      MetricPoint
    )
    expect(rest.data.map((p) => p.value)).toEqual([0.7])
    expect(rest.meta.has_more).toBe(false)
    await data(await post(COSTS, { experimentId: first.id, amount: 0.25, category: "api", source: "openai" }), ExperimentCost, 201)

    // the first completes: the second starts on the freed pod
    await sleep(300)
    const done = await data(await act(first.id, "complete", { reason: "converged" }, labId, key), Experiment)
    expect(done).toMatchObject({ status: "completed", statusMessage: "converged", podId: pod.id })
    const two = await waitForExperiment(own, second.id, (e) => e.status === "running", "to start")
    expect(two).toMatchObject({ status: "running", podId: pod.id })
    expect(two.startedAt?.getTime()).toBeGreaterThanOrEqual(done.finishedAt?.getTime() ?? Infinity)
    await data(await logMetrics(second.id, [{ key: "loss", value: 0.4, step: 1 }], labId, key), Schema.Array(MetricPoint), 201)
    await data(await post(COSTS, { experimentId: second.id, amount: 0.1, category: "storage", source: "checkpoints" }), ExperimentCost, 201)
    await sleep(200)
    const secondDone = await data(await act(second.id, "complete", {}, labId, key), Experiment)
    expect(secondDone.status).toBe("completed")

    // the run time on the pod became a compute cost of each experiment
    const firstFinal = await getExperiment(own, first.id, labId)
    const firstRun = ((firstFinal.finishedAt?.getTime() ?? 0) - (firstFinal.startedAt?.getTime() ?? 0)) / 1000
    expect(firstFinal.cost["USD"]).toBeCloseTo(0.25 + firstRun, 1)
    const records = await costPage(await fx.get(COSTS, { labId, experimentId: first.id }, key))
    const podRecord = records.data.find((c) => c.origin === "pod")
    expect(podRecord).toMatchObject({ category: "compute", source: `pod:${pod.id}`, currency: "USD" })

    await data(await fx.post(`/api/v1/pods/${pod.id}/stop`, { labId }, key), Pod, 202)
    const stopped = await waitForPod(own, pod.id, "stopped", labId)
    expect(processExists(pidOf(running))).toBe(false)

    // /costs: pod uptime × rate as compute (source pods) plus the posted records; pod-derived records not counted twice
    const report = await data(await fx.get("/api/v1/costs", { labId }, key), CostReport)
    const today = new Date().toISOString().slice(0, 10)
    const day = report.days.find((d) => d.date === today && d.currency === "USD")
    expect(day).toBeDefined()
    expect(day?.bySource.pods).toBeCloseTo(stopped.cost, 2)
    expect(day?.podUptimeSeconds).toBeCloseTo(stopped.uptimeSeconds, 1)
    expect(day?.compute).toBeCloseTo(stopped.cost, 2)
    expect(day?.api).toBe(0.25)
    expect(day?.storage).toBe(0.1)
    expect(day?.bySource.experiments).toBeCloseTo(0.35, 6)
    expect(day?.total).toBeCloseTo(stopped.cost + 0.35, 2)
    expect(report.totals).toHaveLength(1)
    expect(report.totals[0]).toMatchObject({ currency: "USD", api: 0.25, storage: 0.1 })
    expect(report.totals[0]?.compute).toBeCloseTo(stopped.cost, 2)

    // the activity feed tells the story in order
    const story = (await fx.activity(labId))
      .filter((e) => e.kind.startsWith("experiment.") && ["experiment.started", "experiment.completed"].includes(e.kind))
      .reverse()
      .map((e) => [e.kind, e.ref])
    expect(story).toEqual([
      ["experiment.started", first.id],
      ["experiment.completed", first.id],
      ["experiment.started", second.id],
      ["experiment.completed", second.id]
    ])
    expect(findActivity(await fx.activity(labId), "experiment.started", first.id)).toMatchObject({ actor: "scheduler", data: { podId: pod.id } })
  })

  it("an experiment running on a pod fails when its pod stops or fails; the pod then takes the next one", async () => {
    const { lab, key, own } = await ownLab("exps-fail")
    const labId = lab.id
    const queue = await data(await fx.post(QUEUES, { labId, name: "main" }, key), Queue, 201)
    const a = await data(await fx.post(EXPERIMENTS, { labId, name: "a" }, key), Experiment, 201)
    const b = await data(await fx.post(EXPERIMENTS, { labId, name: "b" }, key), Experiment, 201)
    await data(await fx.post(QUEUES, { labId, queueId: queue.id, experimentId: a.id }, key), Experiment, 202)
    await data(await fx.post(QUEUES, { labId, queueId: queue.id, experimentId: b.id }, key), Experiment, 202)

    const pod = await createPod(own, { name: "flaky", costPerHour: 0 }, labId, key)
    await data(await fx.post(`/api/v1/pods/${pod.id}/start`, { labId }, key), Pod, 202)
    const first = await waitForPod(own, pod.id, "running", labId)
    await waitFor("a to run", () => getExperiment(own, a.id, labId), (e) => e.status === "running")

    // the process dies: the pod fails, and so does the experiment on it
    process.kill(pidOf(first), "SIGKILL")
    const failedA = await waitFor("a to fail", () => getExperiment(own, a.id, labId), (e) => e.status === "failed")
    expect(failedA.statusMessage).toContain(`pod ${pod.id} failed`)
    expect(failedA.cost).toEqual({})
    expect((await getExperiment(own, b.id, labId)).status).toBe("queued")

    // back up: b starts; a stop fails it
    await data(await fx.post(`/api/v1/pods/${pod.id}/start`, { labId }, key), Pod, 202)
    await waitFor("b to run", () => getExperiment(own, b.id, labId), (e) => e.status === "running")
    await data(await fx.post(`/api/v1/pods/${pod.id}/stop`, { labId }, key), Pod, 202)
    const failedB = await waitFor("b to fail", () => getExperiment(own, b.id, labId), (e) => e.status === "failed")
    expect(failedB.statusMessage).toContain("stopped while it ran")
    expect(findActivity(await fx.activity(labId), "experiment.failed", b.id)).toMatchObject({ actor: "scheduler" })
    expect((await getPod(own, pod.id, labId)).status).toBe("stopped")
  })

  it("several idle pods take several queued experiments at once, oldest queued first", async () => {
    const { lab, key, own } = await ownLab("exps-wide")
    const labId = lab.id
    const queue = await data(await fx.post(QUEUES, { labId, name: "wide" }, key), Queue, 201)
    const ids: Array<string> = []
    for (const name of ["w1", "w2", "w3"]) {
      const e = await data(await fx.post(EXPERIMENTS, { labId, name }, key), Experiment, 201)
      await data(await fx.post(QUEUES, { labId, queueId: queue.id, experimentId: e.id }, key), Experiment, 202)
      ids.push(e.id)
    }
    const pods = [await createPod(own, { name: "p1", costPerHour: 0 }, labId, key), await createPod(own, { name: "p2", costPerHour: 0 }, labId, key)]
    for (const p of pods) await data(await fx.post(`/api/v1/pods/${p.id}/start`, { labId }, key), Pod, 202)
    const [w1, w2, w3] = ids
    if (!w1 || !w2 || !w3) throw new Error("unreachable")
    await waitFor("w1 and w2 to run", async () => [await getExperiment(own, w1, labId), await getExperiment(own, w2, labId)], (es) => es.every((e) => e.status === "running"))
    const third = await getExperiment(own, w3, labId)
    expect(third.status).toBe("queued")
    const onPods = new Set([(await getExperiment(own, w1, labId)).podId, (await getExperiment(own, w2, labId)).podId])
    expect(onPods).toEqual(new Set(pods.map((p) => p.id)))
    for (const id of [w1, w2, w3]) await act(id, "cancel", {}, labId, key)
    for (const p of pods) await stopPod(own, p.id, labId)
    for (const p of pods) await waitForPod(own, p.id, "stopped", labId)
    expect((await getExperiment(own, w1, labId)).status).toBe("cancelled")
  })
})

describe("GET /api/v1/costs", () => {
  it("aggregates pod sessions by UTC day (split at midnight, clipped to the range) and posted records by category", async () => {
    const { lab, key } = await ownLab("exps-costs")
    const labId = lab.id
    const e = await data(await fx.post(EXPERIMENTS, { labId, name: "historic" }, key), Experiment, 201)
    // a past session from 23:00 to 01:30 at 2 EUR/h, written as the pods service writes them
    await fx.server.sql((sql) =>
      sql`INSERT INTO pod_sessions ${sql.insert({
        id: "psess_history",
        labId,
        podId: "pod_history",
        podName: "history",
        costPerHour: 2,
        currency: "EUR",
        startedAt: new Date("2026-01-01T23:00:00Z"),
        stoppedAt: new Date("2026-01-02T01:30:00Z"),
        createdAt: new Date("2026-01-01T23:00:00Z")
      })}`
    )
    await data(
      await fx.post(COSTS, { labId, experimentId: e.id, amount: 4, currency: "EUR", category: "api", source: "anthropic", incurredAt: "2026-01-02T12:00:00Z" }, key),
      ExperimentCost,
      201
    )
    await data(
      await fx.post(COSTS, { labId, experimentId: e.id, amount: 1, category: "storage", source: "s3", incurredAt: "2026-01-02T13:00:00Z" }, key),
      ExperimentCost,
      201
    )
    // a pod-derived record is the same money as the pod's uptime: not counted again
    await fx.server.sql((sql) =>
      sql`INSERT INTO experiment_costs ${sql.insert({
        id: "cost_derived",
        labId,
        experimentId: e.id,
        amount: 99,
        currency: "EUR",
        category: "compute",
        source: "pod:pod_history",
        description: "",
        origin: "pod",
        incurredAt: new Date("2026-01-02T01:00:00Z"),
        createdAt: new Date("2026-01-02T01:00:00Z")
      })}`
    )

    const report = await data(await fx.get("/api/v1/costs", { labId, from: "2026-01-01T00:00:00Z", to: "2026-01-03T00:00:00Z" }, key), CostReport)
    expect(report.from.toISOString()).toBe("2026-01-01T00:00:00.000Z")
    expect(report.days).toEqual([
      { date: "2026-01-01", currency: "EUR", total: 2, compute: 2, api: 0, storage: 0, bySource: { pods: 2, experiments: 0 }, podUptimeSeconds: 3600 },
      { date: "2026-01-02", currency: "EUR", total: 7, compute: 3, api: 4, storage: 0, bySource: { pods: 3, experiments: 4 }, podUptimeSeconds: 5400 },
      { date: "2026-01-02", currency: "USD", total: 1, compute: 0, api: 0, storage: 1, bySource: { pods: 0, experiments: 1 }, podUptimeSeconds: 0 }
    ])
    expect(report.totals).toEqual([
      { currency: "EUR", total: 9, compute: 5, api: 4, storage: 0, count: 2 },
      { currency: "USD", total: 1, compute: 0, api: 0, storage: 1, count: 1 }
    ])

    const clipped = await data(await fx.get("/api/v1/costs", { labId, from: "2026-01-02T00:00:00Z", to: "2026-01-02T01:00:00Z" }, key), CostReport)
    expect(clipped.days).toEqual([
      { date: "2026-01-02", currency: "EUR", total: 2, compute: 2, api: 0, storage: 0, bySource: { pods: 2, experiments: 0 }, podUptimeSeconds: 3600 }
    ])
    const empty = await data(await fx.get("/api/v1/costs", { labId, from: "2025-01-01T00:00:00Z", to: "2025-02-01T00:00:00Z" }, key), CostReport)
    expect(empty).toMatchObject({ days: [], totals: [] })
    // the default range is the last 30 days up to now
    const recent = await data(await fx.get("/api/v1/costs", { labId }, key), CostReport)
    expect(recent.to.getTime()).toBeLessThanOrEqual(Date.now())
    expect((recent.to.getTime() - recent.from.getTime()) / 86_400_000).toBeGreaterThan(29)
  })

  it("422 for a bad range, 403 for a foreign lab, 404 for the operator naming a missing lab", async () => {
    await expectInvalid(await fx.get("/api/v1/costs", { labId: fx.lab.id, from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }), "from")
    await expectInvalid(await fx.get("/api/v1/costs", { labId: fx.lab.id, from: "2024-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }), "366 days")
    await expectInvalid(await fx.get("/api/v1/costs", { labId: fx.lab.id, from: "last week" }), "from")
    await expectInvalid(await fx.get("/api/v1/costs", {}), "labId")
    await expectError(await fx.get("/api/v1/costs", { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await data(await fx.get("/api/v1/costs", { labId: fx.lab.id }, fx.reader), CostReport)
    await expectError(await fx.get("/api/v1/costs", { labId: "no-such-lab" }, fx.admin), 404, "not_found")
  })
})

describe("an idle pod", () => {
  it("a pod that runs takes nothing when no queue has work; its experiments list is empty", async () => {
    const pod = await runningPod(fx, { name: "idle", costPerHour: 0 })
    await sleep(100)
    const onPod = await page(await fx.get(EXPERIMENTS, { labId: fx.lab.id, podId: pod.id }), Experiment)
    expect(onPod.data).toEqual([])
    await startPod(fx, pod.id)
    await stopPod(fx, pod.id)
    await waitForPod(fx, pod.id, "stopped")
  })
})
