import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Survey } from "../../src/surveys/Survey.js"
import { createdId, data, expectError, expectInvalid, findActivity, type Fixture, MISSING, page, patchIn, startFixture, walk } from "../support/LabFixture.js"
import { expectCreateGuarded, expectDeletedThenGone, expectListGuarded } from "../support/RouteChecks.js"

let fx: Fixture
let paperA: string
let paperB: string
let foreignPaper: string

beforeAll(async () => {
  fx = await startFixture("surveys")
  const paper = (title: string, labId = fx.lab.id, token = fx.writer) => createdId(fx, "/api/v1/papers", { title }, labId, token)
  paperA = await paper("Paper A")
  paperB = await paper("Paper B")
  foreignPaper = await paper("Foreign", fx.other.id, fx.stranger)
})
afterAll(() => fx.close())

const SURVEYS = "/api/v1/surveys"
const start = async (body: Record<string, unknown> = {}) =>
  data(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "Sparse attention", ...body }), Survey, 201)
const patch = patchIn(() => fx, SURVEYS)

describe("POST /api/v1/surveys (catalog)", () => {
  it("starts a draft (201) linking papers of the lab; survey.created", async () => {
    const survey = await start({
      question: "Which sparse attention schemes keep quality at 32k context?",
      linkedPaperIds: [paperA, paperB, paperA],
      tags: ["attention"]
    })
    expect(survey).toMatchObject({
      labId: fx.lab.id,
      topic: "Sparse attention",
      question: "Which sparse attention schemes keep quality at 32k context?",
      status: "draft",
      findings: "",
      linkedPaperIds: [paperA, paperB],
      tags: ["attention"]
    })
    expect(survey.id).toMatch(/^srv_/)
    expect(findActivity(await fx.activity(), "survey.created", survey.id)).toMatchObject({
      actor: fx.writerId,
      data: { linkedPaperIds: [paperA, paperB] }
    })
  })

  it("422 for papers that are not the lab's, naming them; unknown and server-owned fields; bad values", async () => {
    const missing = await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", linkedPaperIds: [paperA, MISSING] }), "linkedPaperIds")
    expect(missing).toContain(MISSING)
    expect(missing).not.toContain(paperA)
    await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", linkedPaperIds: [foreignPaper] }), foreignPaper)
    await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", status: "completed" }), "status is not a known field")
    await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", summary: "x" }), "summary is not a known field")
    await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id }), "topic is required")
    await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", findings: "f".repeat(100_001) }), "findings")
    await expectInvalid(await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", linkedPaperIds: "p" }), "linkedPaperIds")
    await expectInvalid(
      await fx.post(SURVEYS, { labId: fx.lab.id, topic: "T", linkedPaperIds: Array.from({ length: 201 }, (_, i) => `p${i}`) }),
      "linkedPaperIds"
    )
  })

  it("403 for a foreign lab and a read-only key; 404 for the operator's missing lab", async () => {
    await expectCreateGuarded(fx, SURVEYS, { topic: "T" })
  })
})

describe("the survey lifecycle (PATCH, extension)", () => {
  it("draft → in_progress → completed → archived, with findings written along the way; archived is final", async () => {
    const survey = await start({ topic: "Lifecycle" })
    const started = await data(await patch(survey.id, { status: "in_progress" }), Survey)
    expect(started.status).toBe("in_progress")
    expect(findActivity(await fx.activity(), "survey.started", survey.id).data).toMatchObject({ from: "draft", to: "in_progress" })

    const written = await data(await patch(survey.id, { findings: "## Findings\n\n- Longformer holds up.", linkedPaperIds: [paperB] }), Survey)
    expect(written).toMatchObject({ status: "in_progress", findings: "## Findings\n\n- Longformer holds up.", linkedPaperIds: [paperB] })
    expect(findActivity(await fx.activity(), "survey.updated", survey.id).data).toMatchObject({ changed: ["findings", "linkedPaperIds"] })

    const completed = await data(await patch(survey.id, { status: "completed" }), Survey)
    expect(completed.status).toBe("completed")
    findActivity(await fx.activity(), "survey.completed", survey.id)
    // a completed survey can still be corrected
    expect((await data(await patch(survey.id, { findings: "corrected" }), Survey)).findings).toBe("corrected")

    const archived = await data(await patch(survey.id, { status: "archived" }), Survey)
    expect(archived.status).toBe("archived")
    findActivity(await fx.activity(), "survey.archived", survey.id)
    for (const body of [{ status: "in_progress" }, { status: "completed" }, { findings: "late" }, { status: "archived" }]) {
      expect(await expectError(await patch(survey.id, body), 409, "conflict")).toContain("archived")
    }
    expect(await data(await fx.get(`${SURVEYS}/${survey.id}`, { labId: fx.lab.id }), Survey)).toEqual(archived)
  })

  it("409 for illegal transitions, naming the allowed ones", async () => {
    const survey = await start({ topic: "Illegal" })
    const message = await expectError(await patch(survey.id, { status: "completed" }), 409, "conflict")
    expect(message).toContain("in_progress")
    await data(await patch(survey.id, { status: "in_progress" }), Survey)
    await expectError(await patch(survey.id, { status: "draft" }), 409, "conflict")
    await data(await patch(survey.id, { status: "completed" }), Survey)
    await expectError(await patch(survey.id, { status: "in_progress" }), 409, "conflict")
    await expectError(await patch(survey.id, { status: "draft" }), 409, "conflict")
    // a draft can be archived directly
    const other = await start({ topic: "Shelved" })
    expect((await data(await patch(other.id, { status: "archived" }), Survey)).status).toBe("archived")
  })

  it("422 for unknown fields, a bad status and papers not in the lab; 404 missing; 403 foreign lab and read-only key", async () => {
    const survey = await start({ topic: "Guarded" })
    await expectInvalid(await patch(survey.id, { state: "in_progress" }), "state is not a known field")
    await expectInvalid(await patch(survey.id, { status: "done" }), "status")
    await expectInvalid(await patch(survey.id, { linkedPaperIds: [paperA, foreignPaper] }), foreignPaper)
    await expectError(await patch(MISSING, { status: "in_progress" }), 404, "not_found")
    await expectError(await patch(survey.id, { status: "in_progress" }, fx.stranger), 403, "forbidden")
    await expectError(await patch(survey.id, { status: "in_progress" }, fx.reader), 403, "forbidden")
    expect((await data(await fx.get(`${SURVEYS}/${survey.id}`, { labId: fx.lab.id }), Survey)).status).toBe("draft")
  })
})

describe("GET /api/v1/surveys (catalog)", () => {
  it("lists newest first, filtered by status, tag, linked paper and time", async () => {
    const from = new Date().toISOString()
    const a = await start({ topic: "F1", tags: ["x"], linkedPaperIds: [paperA] })
    const b = await start({ topic: "F2", tags: ["x", "y"] })
    await data(await patch(b.id, { status: "in_progress" }), Survey)
    const ids = async (params: Record<string, string>) =>
      (await walk(fx, SURVEYS, { labId: fx.lab.id, from, ...params }, Survey)).map((s) => s.id)
    expect(await ids({})).toEqual([b.id, a.id])
    expect(await ids({ status: "in_progress" })).toEqual([b.id])
    expect(await ids({ status: "draft" })).toEqual([a.id])
    expect(await ids({ tag: "y" })).toEqual([b.id])
    expect(await ids({ paperId: paperA })).toEqual([a.id])
    expect((await page(await fx.get(SURVEYS, { labId: fx.lab.id }, fx.reader), Survey)).data.length).toBeGreaterThan(1)
  })

  it("422 for a bad status; 403 foreign lab; 404 the operator's missing lab", async () => {
    await expectInvalid(await fx.get(SURVEYS, { labId: fx.lab.id, status: "done" }), "status")
    await expectListGuarded(fx, SURVEYS)
  })
})

describe("GET and DELETE /api/v1/surveys/{id} (extensions)", () => {
  it("reads, deletes (survey.deleted), then 404", async () => {
    const survey = await start({ topic: "Doomed" })
    expect(await data(await fx.get(`${SURVEYS}/${survey.id}`, { labId: fx.lab.id }, fx.reader), Survey)).toEqual(survey)
    await expectDeletedThenGone(fx, SURVEYS, survey, Survey, "survey.deleted")
  })

  it("404 for another lab's id; 403 for a foreign lab and a read-only delete; 422 without labId", async () => {
    const survey = await start({ topic: "Kept" })
    await expectError(await fx.get(`${SURVEYS}/${survey.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${SURVEYS}/${survey.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${SURVEYS}/${survey.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${SURVEYS}/${survey.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    await expectInvalid(await fx.del(`${SURVEYS}/${survey.id}`, {}), "labId")
  })
})
