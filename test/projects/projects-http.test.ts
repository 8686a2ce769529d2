import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Project, ProjectDetail, ProjectItem } from "../../src/projects/Project.js"
import { createdId, data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, patchIn, startFixture, walk, WithId } from "../support/LabFixture.js"
import { expectCreateGuarded, expectListGuarded } from "../support/RouteChecks.js"

let fx: Fixture
let taskId: string
let paperId: string
let foreignTask: string

beforeAll(async () => {
  fx = await startFixture("projects")
  taskId = await createdId(fx, "/api/v1/tasks", { title: "Run baseline" })
  paperId = await createdId(fx, "/api/v1/papers", { title: "Our paper" })
  foreignTask = await createdId(fx, "/api/v1/tasks", { title: "Theirs" }, fx.other.id, fx.stranger)
})
afterAll(() => fx.close())

const PROJECTS = "/api/v1/projects"
const create = async (name: string, description?: string) =>
  data(await fx.post(PROJECTS, { labId: fx.lab.id, name, description }), ProjectDetail, 201)
const patch = patchIn(() => fx, PROJECTS)
const addItem = (id: string, body: Record<string, unknown>, token?: string) =>
  fx.post(`${PROJECTS}/${id}/items`, { labId: fx.lab.id, ...body }, token)
const get = async (id: string) => data(await fx.get(`${PROJECTS}/${id}`, { labId: fx.lab.id }), ProjectDetail)

describe("POST /api/v1/projects (catalog)", () => {
  it("creates an active project (201) with no items; project.created", async () => {
    const project = await create("Vision transformer", "ViT ablations")
    expect(project).toMatchObject({ labId: fx.lab.id, name: "Vision transformer", description: "ViT ablations", status: "active", itemCount: 0, items: [] })
    expect(project.id).toMatch(/^prj_/)
    expect(findActivity(await fx.activity(), "project.created", project.id).actor).toBe(fx.writerId)
  })

  it("409 for a name the lab uses (case-insensitive); 422 for unknown fields and bad values", async () => {
    const first = await create("Named")
    expect(await expectError(await fx.post(PROJECTS, { labId: fx.lab.id, name: "NAMED" }), 409, "conflict")).toContain(first.id)
    await expectInvalid(await fx.post(PROJECTS, { labId: fx.lab.id, name: "X", status: "paused" }), "status is not a known field")
    await expectInvalid(await fx.post(PROJECTS, { labId: fx.lab.id, name: "X", owner: "me" }), "owner is not a known field")
    await expectInvalid(await fx.post(PROJECTS, { labId: fx.lab.id }), "name is required")
    await expectInvalid(await fx.post(PROJECTS, { labId: fx.lab.id, name: "X", description: "d".repeat(20_001) }), "description")
  })

  it("403 for a foreign lab and a read-only key; 404 for the operator's missing lab", async () => {
    await expectCreateGuarded(fx, PROJECTS, { name: "Z" })
  })
})

describe("items: POST /api/v1/projects/{id}/items and DELETE …/items/{itemId} (extensions)", () => {
  it("groups a task and a paper of the lab; GET shows them in order; the list counts them", async () => {
    const project = await create("Grouping")
    const task = await data(await addItem(project.id, { kind: "task", ref: taskId }), ProjectItem, 201)
    const paper = await data(await addItem(project.id, { kind: "paper", ref: paperId }), ProjectItem, 201)
    expect(task).toMatchObject({ projectId: project.id, labId: fx.lab.id, kind: "task", ref: taskId })
    expect(task.id).toMatch(/^pit_/)
    const detail = await get(project.id)
    expect(detail.items).toEqual([task, paper])
    expect(detail.itemCount).toBe(2)
    expect(findActivity(await fx.activity(), "project.item_added", project.id).data).toMatchObject({ itemId: paper.id, kind: "paper" })
    const listed = (await walk(fx, PROJECTS, { labId: fx.lab.id, ref: taskId }, Project)).map((p) => [p.id, p.itemCount])
    expect(listed).toEqual([[project.id, 2]])

    const removed = await data(await fx.del(`${PROJECTS}/${project.id}/items/${task.id}`, { labId: fx.lab.id }), ProjectItem)
    expect(removed).toEqual(task)
    expect(findActivity(await fx.activity(), "project.item_removed", project.id).data).toMatchObject({ itemId: task.id })
    expect((await get(project.id)).items).toEqual([paper])
    await expectError(await fx.del(`${PROJECTS}/${project.id}/items/${task.id}`, { labId: fx.lab.id }), 404, "not_found")
  })

  it("409 for an item already in the project, naming it", async () => {
    const project = await create("Dupes")
    const item = await data(await addItem(project.id, { kind: "task", ref: taskId }), ProjectItem, 201)
    expect(await expectError(await addItem(project.id, { kind: "task", ref: taskId }), 409, "conflict")).toContain(item.id)
  })

  it("422 for refs that are not the lab's experiments, papers or tasks; unknown fields; bad kinds", async () => {
    const project = await create("Refs")
    await expectInvalid(await addItem(project.id, { kind: "task", ref: MISSING }), "ref")
    await expectInvalid(await addItem(project.id, { kind: "task", ref: foreignTask }), "ref")
    await expectInvalid(await addItem(project.id, { kind: "paper", ref: taskId }), "ref")
    await expectInvalid(await addItem(project.id, { kind: "experiment", ref: MISSING }), "ref")
    await expectInvalid(await addItem(project.id, { kind: "dataset", ref: taskId }), "kind")
    await expectInvalid(await addItem(project.id, { kind: "task", ref: taskId, note: "x" }), "note is not a known field")
    await expectInvalid(await addItem(project.id, { kind: "task" }), "ref is required")
  })

  it("404 for a missing project or item; 403 for a foreign lab and a read-only key", async () => {
    const project = await create("Guarded items")
    const item = await data(await addItem(project.id, { kind: "task", ref: taskId }), ProjectItem, 201)
    await expectError(await addItem(MISSING, { kind: "task", ref: taskId }), 404, "not_found")
    await expectError(await addItem(project.id, { kind: "task", ref: taskId }, fx.stranger), 403, "forbidden")
    await expectError(await addItem(project.id, { kind: "task", ref: taskId }, fx.reader), 403, "forbidden")
    await expectError(await fx.del(`${PROJECTS}/${project.id}/items/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.del(`${PROJECTS}/${MISSING}/items/${item.id}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.del(`${PROJECTS}/${project.id}/items/${item.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${PROJECTS}/${project.id}/items/${item.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    expect((await get(project.id)).items).toEqual([item])
  })
})

describe("the project lifecycle (PATCH, extension)", () => {
  it("active → paused → active → completed → archived; items change only while active or paused; archived is final", async () => {
    const project = await create("Lifecycle")
    const steps = [
      ["paused", "project.paused"],
      ["active", "project.resumed"],
      ["paused", "project.paused"]
    ] as const
    for (const [status, kind] of steps) {
      expect((await data(await patch(project.id, { status }), ProjectDetail)).status).toBe(status)
      expect((await fx.activity()).find((e) => e.ref === project.id && e.kind === kind)?.data).toMatchObject({ to: status })
    }
    const item = await data(await addItem(project.id, { kind: "task", ref: taskId }), ProjectItem, 201)
    const completed = await data(await patch(project.id, { status: "completed" }), ProjectDetail)
    expect(completed).toMatchObject({ status: "completed", items: [item] })
    findActivity(await fx.activity(), "project.completed", project.id)
    await expectError(await addItem(project.id, { kind: "paper", ref: paperId }), 409, "conflict")
    await expectError(await fx.del(`${PROJECTS}/${project.id}/items/${item.id}`, { labId: fx.lab.id }), 409, "conflict")
    await expectError(await patch(project.id, { status: "active" }), 409, "conflict")
    await expectError(await patch(project.id, { status: "paused" }), 409, "conflict")
    // a completed project can still be described
    expect((await data(await patch(project.id, { description: "Done: see paper" }), ProjectDetail)).description).toBe("Done: see paper")
    expect((await data(await patch(project.id, { status: "archived" }), ProjectDetail)).status).toBe("archived")
    findActivity(await fx.activity(), "project.archived", project.id)
    for (const body of [{ status: "active" }, { name: "Renamed" }, { status: "completed" }]) {
      expect(await expectError(await patch(project.id, body), 409, "conflict")).toContain("archived")
    }
    await expectError(await addItem(project.id, { kind: "paper", ref: paperId }), 409, "conflict")
  })

  it("renames (project.updated), 409 for a taken name, 422 for unknown fields and bad status, 404, 403", async () => {
    const project = await create("Rename me")
    await create("Taken project")
    const renamed = await data(await patch(project.id, { name: "Renamed project" }), ProjectDetail)
    expect(renamed.name).toBe("Renamed project")
    expect(findActivity(await fx.activity(), "project.updated", project.id).data).toMatchObject({ changed: ["name"] })
    await expectError(await patch(project.id, { name: "taken PROJECT" }), 409, "conflict")
    await expectInvalid(await patch(project.id, { itemCount: 3 }), "itemCount is not a known field")
    await expectInvalid(await patch(project.id, { status: "done" }), "status")
    await expectError(await patch(MISSING, { name: "x" }), 404, "not_found")
    await expectError(await patch(project.id, { name: "x" }, fx.stranger), 403, "forbidden")
    await expectError(await patch(project.id, { name: "x" }, fx.reader), 403, "forbidden")
  })
})

describe("GET /api/v1/projects (catalog) and GET/DELETE /api/v1/projects/{id} (extensions)", () => {
  it("lists newest first, filtered by status", async () => {
    const from = new Date().toISOString()
    const a = await create("List one")
    const b = await create("List two")
    await data(await patch(a.id, { status: "paused" }), ProjectDetail)
    const ids = async (params: Record<string, string>) =>
      (await walk(fx, PROJECTS, { labId: fx.lab.id, from, ...params }, Project)).map((p) => p.id)
    expect(await ids({})).toEqual([b.id, a.id])
    expect(await ids({ status: "paused" })).toEqual([a.id])
    expect((await page(await fx.get(PROJECTS, { labId: fx.lab.id }, fx.reader), Project)).data.length).toBeGreaterThan(1)
    await expectInvalid(await fx.get(PROJECTS, { labId: fx.lab.id, status: "open" }), "status")
    await expectListGuarded(fx, PROJECTS)
  })

  it("reads and deletes one (project.deleted; its items go with it, the task stays); 404 and 403", async () => {
    const project = await create("Short lived")
    await data(await addItem(project.id, { kind: "task", ref: taskId }), ProjectItem, 201)
    const detail = await data(await fx.get(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }, fx.reader), ProjectDetail)
    await expectError(await fx.get(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(`${PROJECTS}/${project.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.del(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    expect(await data(await fx.del(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }), ProjectDetail)).toEqual(detail)
    expect(findActivity(await fx.activity(), "project.deleted", project.id).data).toMatchObject({ items: 1 })
    await expectError(await fx.get(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.del(`${PROJECTS}/${project.id}`, { labId: fx.lab.id }), 404, "not_found")
    const tasks = await page(await fx.get("/api/v1/tasks", { labId: fx.lab.id }), WithId)
    expect(tasks.data.map((t) => t.id)).toContain(taskId)
  })
})
