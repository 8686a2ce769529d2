import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { File } from "../../src/files/File.js"
import { Lab } from "../../src/labs/Lab.js"
import { Paper, PaperVersion } from "../../src/papers/Paper.js"
import { data, expectError, page } from "../support/http.js"
import { type Fixture, queryOf, startFixture } from "../support/LabFixture.js"
import { expectGuardedOnEveryRoute, expectMissingOnEveryRoute } from "../support/RouteChecks.js"
import type { TestServer } from "../support/TestServer.js"

let fx: Fixture
let server: TestServer
let lab: Lab
let other: Lab
let writer: { readonly id: string; readonly key: string }
let readerKey: string
let otherKey: string

type Body = Record<string, unknown>

const call = (method: string, path: string, json?: Body, token = writer.key) => fx.call(method, path, json, token)

const q = queryOf

const writeFile = async (path: string, content: string) => {
  const response = await call("POST", "/api/v1/files", { labId: lab.id, path, content })
  expect([200, 201]).toContain(response.status)
  return data(response, File, response.status)
}

const createPaper = async (body: Body = {}) =>
  data(await call("POST", "/api/v1/papers", { labId: lab.id, title: "A paper", ...body }), Paper, 201)

const getPaper = async (id: string) => data(await call("GET", `/api/v1/papers/${id}?labId=${lab.id}`), Paper)

const startLoop = (id: string, token = writer.key) => call("POST", `/api/v1/papers/${id}/publish-loop`, { labId: lab.id }, token)

const move = (id: string, to: string, extra: Body = {}) => call("POST", `/api/v1/papers/${id}/transition`, { labId: lab.id, to, ...extra })

const versions = async (id: string, params: Record<string, string | number | undefined> = {}) =>
  page(await call("GET", `/api/v1/papers/${id}/versions?${q({ labId: lab.id, ...params })}`), PaperVersion)

/** Poll the paper until its loop has stopped running. */
const settled = async (id: string): Promise<Paper> => {
  const start = Date.now()
  for (;;) {
    const paper = await getPaper(id)
    if (paper.loop.status !== "running") return paper
    if (Date.now() - start > 20_000) throw new Error(`the publish loop of ${id} never finished`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** The lab's activity entries about one paper, oldest first. */
const activityOf = async (ref: string) => {
  const entries: Array<Activity> = []
  let cursor: string | undefined
  for (;;) {
    const result = await page(await call("GET", `/api/v1/activity?${q({ labId: lab.id, limit: 100, cursor })}`), Activity)
    entries.push(...result.data)
    if (result.meta.next_cursor === null) break
    cursor = result.meta.next_cursor
  }
  return entries.filter((e) => e.ref === ref).reverse()
}

/** A paper whose files are all in the lab. */
const paperWithFiles = async (name: string) => {
  const tex = await writeFile(`/papers/${name}/main.tex`, `\\documentclass{article}\\begin{document}${name}\\end{document}\n`)
  const bib = await writeFile(`/papers/${name}/refs.bib`, `@article{${name}, title={T}}\n`)
  const paper = await createPaper({
    title: `Paper ${name}`,
    abstract: "We show things.",
    authors: [{ name: "Ada Lovelace", affiliation: "Analytical Engines", email: "ada@example.org" }, { name: "Alan Turing" }],
    files: [tex.path, bib.path]
  })
  return { paper, tex, bib }
}

beforeAll(async () => {
  fx = await startFixture("papers")
  server = fx.server
  lab = fx.lab
  other = fx.other
  writer = { id: fx.writerId, key: fx.writer }
  readerKey = fx.reader
  otherKey = fx.stranger
})
afterAll(() => fx.close())

describe("creating and reading papers", () => {
  it("creates a draft (201), reads it back, lists it newest first and filters by status and date", async () => {
    const before = new Date(Date.now() - 1000).toISOString()
    const paper = await createPaper({
      title: "  Attention is all you need  ",
      abstract: "Transformers.",
      authors: [{ name: "A. Vaswani", affiliation: "Google" }],
      files: ["/papers/attn//main.tex"]
    })
    expect(paper).toMatchObject({
      labId: lab.id,
      title: "Attention is all you need",
      abstract: "Transformers.",
      authors: [{ name: "A. Vaswani", affiliation: "Google" }],
      files: ["/papers/attn/main.tex"],
      status: "draft",
      version: 1,
      publishedVersion: null,
      publishedAt: null,
      loop: { runId: null, status: "idle", steps: [], startedBy: null, startedAt: null, finishedAt: null, error: null }
    })
    expect(paper.id).toMatch(/^paper_/)
    expect(await getPaper(paper.id)).toEqual(paper)
    // the slug addresses the lab too
    expect(await data(await call("GET", `/api/v1/papers/${paper.id}?labId=${lab.slug}`), Paper)).toEqual(paper)

    const second = await createPaper({ title: "Second" })
    const listed = await page(await call("GET", `/api/v1/papers?${q({ labId: lab.id, from: before })}`, undefined, readerKey), Paper)
    expect(listed.data.slice(0, 2).map((p) => p.id)).toEqual([second.id, paper.id])
    const drafts = await page(await call("GET", `/api/v1/papers?${q({ labId: lab.id, status: "draft" })}`), Paper)
    expect(drafts.data.every((p) => p.status === "draft")).toBe(true)
    const none = await page(await call("GET", `/api/v1/papers?${q({ labId: lab.id, status: "published", to: before })}`), Paper)
    expect(none.data).toEqual([])

    const created = await activityOf(paper.id)
    expect(created).toHaveLength(1)
    expect(created[0]).toMatchObject({ kind: "paper.created", actor: writer.id, labId: lab.id })
  })

  it("paginates with the shared cursor", async () => {
    const mine = []
    for (let i = 0; i < 5; i++) mine.push(await createPaper({ title: `Paged ${i}` }))
    const seen: Array<string> = []
    let cursor: string | undefined
    for (let guard = 0; guard < 100; guard++) {
      const result = await page(await call("GET", `/api/v1/papers?${q({ labId: lab.id, limit: 2, cursor })}`), Paper)
      expect(result.data.length).toBeLessThanOrEqual(2)
      seen.push(...result.data.map((p) => p.id))
      if (result.meta.next_cursor === null) break
      cursor = result.meta.next_cursor
    }
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.slice(0, 5)).toEqual(mine.map((p) => p.id).reverse())
  })
})

describe("the publish loop", () => {
  it("with every file present: 202, then draft → submitted → in_review → accepted → published, each step recorded", async () => {
    const { paper, tex, bib } = await paperWithFiles("full")
    const started = await data(await startLoop(paper.id), Paper, 202)
    expect(started.loop).toMatchObject({ status: "running", startedBy: writer.id, error: null })
    expect(started.loop.runId).toMatch(/^run_/)

    const done = await settled(paper.id)
    expect(done).toMatchObject({ status: "published", version: 1, publishedVersion: 1 })
    expect(done.publishedAt).not.toBeNull()
    expect(done.loop).toMatchObject({ runId: started.loop.runId, status: "done", error: null })
    expect(done.loop.steps.map((s) => [s.kind, s.ok, s.from, s.to])).toEqual([
      ["check_files", true, "draft", null],
      ["advance", true, "draft", "submitted"],
      ["advance", true, "submitted", "in_review"],
      ["advance", true, "in_review", "accepted"],
      ["advance", true, "accepted", "published"]
    ])

    // one activity entry per status change, by the key that started the loop
    const entries = await activityOf(paper.id)
    expect(entries.map((e) => e.kind)).toEqual([
      "paper.created",
      "paper.loop_started",
      "paper.submitted",
      "paper.in_review",
      "paper.accepted",
      "paper.published",
      "paper.loop_done"
    ])
    expect(entries.every((e) => e.actor === writer.id)).toBe(true)
    expect(entries.find((e) => e.kind === "paper.accepted")?.data).toMatchObject({ from: "in_review", to: "accepted", runId: started.loop.runId })

    // the published version is frozen with the blob ids of its files
    const listed = await versions(paper.id)
    expect(listed.data).toHaveLength(1)
    expect(listed.data[0]).toMatchObject({
      paperId: paper.id,
      labId: lab.id,
      version: 1,
      status: "published",
      title: "Paper full",
      publishedBy: writer.id,
      files: [
        { path: tex.path, sha: tex.sha, size: tex.size },
        { path: bib.path, sha: bib.sha, size: bib.size }
      ]
    })

    // again: nothing to do, 200 with the same run
    const again = await data(await startLoop(paper.id), Paper, 200)
    expect(again).toEqual(done)
  })

  it("is safe to repeat: concurrent starts answer with one run, and every status changes once", async () => {
    const { paper } = await paperWithFiles("repeat")
    const responses = await Promise.all(Array.from({ length: 5 }, () => startLoop(paper.id)))
    const bodies = await Promise.all(responses.map((r) => data(r, Paper, r.status)))
    expect(responses.every((r) => r.status === 202 || r.status === 200)).toBe(true)
    expect(responses.some((r) => r.status === 202)).toBe(true) // one started it; the others saw it running (202) or done (200)
    const runIds = new Set(bodies.map((b) => b.loop.runId))
    expect(runIds.size).toBe(1)
    const done = await settled(paper.id)
    expect(done.status).toBe("published")
    expect(done.loop.steps).toHaveLength(5)
    const kinds = (await activityOf(paper.id)).map((e) => e.kind)
    expect(kinds.filter((k) => k === "paper.loop_started")).toHaveLength(1)
    expect(kinds.filter((k) => k === "paper.published")).toHaveLength(1)
    expect((await versions(paper.id)).data).toHaveLength(1)
  })

  it("with a missing file: the loop fails, the paper keeps its status; with the file written, a new run publishes it", async () => {
    const tex = await writeFile("/papers/missing/main.tex", "text\n")
    const paper = await createPaper({ title: "Incomplete", files: [tex.path, "/papers/missing/figure.tex"] })
    const started = await data(await startLoop(paper.id), Paper, 202)
    const failed = await settled(paper.id)
    expect(failed).toMatchObject({ status: "draft", publishedVersion: null })
    expect(failed.loop).toMatchObject({ runId: started.loop.runId, status: "failed" })
    expect(failed.loop.error).toContain("/papers/missing/figure.tex")
    expect(failed.loop.steps).toEqual([
      expect.objectContaining({ kind: "check_files", ok: false, from: "draft", to: null, missing: ["/papers/missing/figure.tex"] })
    ])
    expect((await activityOf(paper.id)).map((e) => e.kind)).toEqual(["paper.created", "paper.loop_started", "paper.loop_failed"])
    expect((await versions(paper.id)).data).toEqual([])

    await writeFile("/papers/missing/figure.tex", "the figure\n")
    const retry = await data(await startLoop(paper.id), Paper, 202)
    expect(retry.loop.runId).not.toBe(started.loop.runId)
    expect(retry.loop.steps).toEqual([])
    const done = await settled(paper.id)
    expect(done).toMatchObject({ status: "published", loop: { status: "done", runId: retry.loop.runId } })
  })

  it("a paper without files cannot be published: the loop fails", async () => {
    const paper = await createPaper({ title: "No files" })
    await data(await startLoop(paper.id), Paper, 202)
    const failed = await settled(paper.id)
    expect(failed).toMatchObject({ status: "draft", loop: { status: "failed", error: "the paper lists no files" } })
  })

  it("resumes from where the paper is: revision_requested → submitted → in_review → accepted → published", async () => {
    const { paper } = await paperWithFiles("revise")
    for (const to of ["submitted", "in_review", "revision_requested"]) await data(await move(paper.id, to), Paper)
    await data(await startLoop(paper.id), Paper, 202)
    const done = await settled(paper.id)
    expect(done.loop.steps.filter((s) => s.kind === "advance").map((s) => `${s.from}→${s.to}`)).toEqual([
      "revision_requested→submitted",
      "submitted→in_review",
      "in_review→accepted",
      "accepted→published"
    ])
  })

  it("a run left running (by another instance) blocks changes with 409, and a start picks it up", async () => {
    const { paper } = await paperWithFiles("orphan")
    await server.sql((sql) => sql`UPDATE papers SET loop_status = 'running', loop_run_id = 'run_elsewhere', loop_started_by = ${writer.id} WHERE id = ${paper.id}`)
    expect(await expectError(await call("PATCH", `/api/v1/papers/${paper.id}`, { labId: lab.id, title: "New" }), 409, "conflict")).toMatch(/publish loop is running/)
    expect(await expectError(await move(paper.id, "submitted"), 409, "conflict")).toMatch(/publish loop is running/)
    const resumed = await data(await startLoop(paper.id), Paper, 202)
    expect(resumed.loop.runId).toBe("run_elsewhere")
    expect(await settled(paper.id)).toMatchObject({ status: "published", loop: { runId: "run_elsewhere", status: "done" } })
  })

  it("a withdrawal stops a running loop", async () => {
    const { paper } = await paperWithFiles("withdrawn-running")
    await server.sql((sql) => sql`UPDATE papers SET loop_status = 'running', loop_run_id = 'run_stuck', loop_started_by = ${writer.id} WHERE id = ${paper.id}`)
    const withdrawn = await data(await move(paper.id, "withdrawn", { note: "duplicate submission" }), Paper)
    expect(withdrawn).toMatchObject({ status: "withdrawn", loop: { status: "failed", runId: "run_stuck" } })
    expect(withdrawn.loop.steps.at(-1)).toMatchObject({ kind: "stop", ok: false, from: "draft", to: "withdrawn" })
    const entries = await activityOf(paper.id)
    expect(entries.slice(-2).map((e) => e.kind)).toEqual(["paper.withdrawn", "paper.loop_failed"])
    expect(entries.at(-2)?.data).toMatchObject({ from: "draft", to: "withdrawn", note: "duplicate submission" })
  })
})

describe("published papers are immutable; a change makes a new version", () => {
  it("PATCH of a published paper starts version 2 as a draft; version 1 stays readable at /versions", async () => {
    const { paper } = await paperWithFiles("versions")
    await data(await startLoop(paper.id), Paper, 202)
    const v1 = await settled(paper.id)
    expect(v1.status).toBe("published")

    // the same values change nothing: no new version
    expect(await data(await call("PATCH", `/api/v1/papers/${paper.id}`, { labId: lab.id, title: v1.title }), Paper)).toEqual(v1)

    const v2 = await data(await call("PATCH", `/api/v1/papers/${paper.id}`, { labId: lab.id, title: "Paper versions, revised" }), Paper)
    expect(v2).toMatchObject({
      id: paper.id,
      title: "Paper versions, revised",
      status: "draft",
      version: 2,
      publishedVersion: 1,
      publishedAt: null,
      loop: { status: "idle", runId: null, steps: [] }
    })
    const frozen = await versions(paper.id)
    expect(frozen.data.map((v) => [v.version, v.title])).toEqual([[1, "Paper versions"]])
    expect((await activityOf(paper.id)).at(-1)).toMatchObject({ kind: "paper.version_created", data: { version: 2, from: 1, changed: ["title"] } })

    // v2 through the loop: both versions listed, newest first, one per page
    await data(await startLoop(paper.id), Paper, 202)
    expect(await settled(paper.id)).toMatchObject({ status: "published", version: 2, publishedVersion: 2 })
    const all = await versions(paper.id)
    expect(all.data.map((v) => [v.version, v.title])).toEqual([
      [2, "Paper versions, revised"],
      [1, "Paper versions"]
    ])
    const first = await versions(paper.id, { limit: 1 })
    expect(first.data.map((v) => v.version)).toEqual([2])
    expect(first.meta.has_more).toBe(true)
    const second = await versions(paper.id, { limit: 1, cursor: first.meta.next_cursor ?? undefined })
    expect(second.data.map((v) => v.version)).toEqual([1])
    expect(second.meta).toMatchObject({ has_more: false, next_cursor: null })

    // a published paper cannot be deleted
    expect(await expectError(await call("DELETE", `/api/v1/papers/${paper.id}?labId=${lab.id}`), 409, "conflict")).toMatch(/published/)
  })

  it("a draft changes in place and writes an activity entry; deleting it writes one too", async () => {
    const paper = await createPaper({ title: "Editable" })
    const edited = await data(
      await call("PATCH", `/api/v1/papers/${paper.id}`, {
        labId: lab.id,
        abstract: "Now with an abstract.",
        authors: [{ name: "Grace Hopper" }],
        files: ["/papers/editable/main.tex"]
      }),
      Paper
    )
    expect(edited).toMatchObject({ version: 1, status: "draft", abstract: "Now with an abstract.", authors: [{ name: "Grace Hopper" }] })
    expect(edited.files).toEqual(["/papers/editable/main.tex"])
    const deleted = await data(await call("DELETE", `/api/v1/papers/${paper.id}?labId=${lab.id}`), Paper)
    expect(deleted.id).toBe(paper.id)
    await expectError(await call("GET", `/api/v1/papers/${paper.id}?labId=${lab.id}`), 404, "not_found")
    expect((await activityOf(paper.id)).map((e) => e.kind)).toEqual(["paper.created", "paper.updated", "paper.deleted"])
  })
})

describe("transitions", () => {
  it("walks the machine by hand and refuses illegal moves with 409", async () => {
    const paper = await createPaper({ title: "Reviewed" })
    expect(await expectError(await move(paper.id, "in_review"), 409, "conflict")).toBe(
      `paper ${paper.id} is draft: it can become submitted, withdrawn, not in_review`
    )
    expect(await expectError(await move(paper.id, "accepted"), 409, "conflict")).toMatch(/not accepted/)
    await data(await move(paper.id, "submitted"), Paper)
    await expectError(await move(paper.id, "submitted"), 409, "conflict")
    await data(await move(paper.id, "in_review"), Paper)
    await data(await move(paper.id, "revision_requested", { note: "Reviewer 2 wants more baselines" }), Paper)
    await expectError(await move(paper.id, "accepted"), 409, "conflict")
    await data(await move(paper.id, "submitted"), Paper)
    await data(await move(paper.id, "in_review"), Paper)
    const accepted = await data(await move(paper.id, "accepted"), Paper)
    expect(accepted.status).toBe("accepted")
    // published only through the loop
    expect(await expectError(await move(paper.id, "published"), 409, "conflict")).toMatch(/only the publish loop/)
    const withdrawn = await data(await move(paper.id, "withdrawn"), Paper)
    expect(withdrawn.status).toBe("withdrawn")
    // final
    expect(await expectError(await move(paper.id, "draft"), 409, "conflict")).toMatch(/final state/)
    expect(await expectError(await call("PATCH", `/api/v1/papers/${paper.id}`, { labId: lab.id, title: "x" }), 409, "conflict")).toMatch(/withdrawn/)
    expect(await expectError(await startLoop(paper.id), 409, "conflict")).toMatch(/withdrawn/)
    expect((await activityOf(paper.id)).map((e) => e.kind)).toEqual([
      "paper.created",
      "paper.submitted",
      "paper.in_review",
      "paper.revision_requested",
      "paper.submitted",
      "paper.in_review",
      "paper.accepted",
      "paper.withdrawn"
    ])
    // a withdrawn paper that was never published can be deleted
    expect((await data(await call("DELETE", `/api/v1/papers/${paper.id}?labId=${lab.id}`), Paper)).status).toBe("withdrawn")
  })
})

describe("errors on every route", () => {
  const routes = (id: string, labId: string) => [
    ["GET", `/api/v1/papers?labId=${labId}`, undefined],
    ["POST", "/api/v1/papers", { labId, title: "t" }],
    ["GET", `/api/v1/papers/${id}?labId=${labId}`, undefined],
    ["PATCH", `/api/v1/papers/${id}`, { labId, title: "t" }],
    ["DELETE", `/api/v1/papers/${id}?labId=${labId}`, undefined],
    ["GET", `/api/v1/papers/${id}/versions?labId=${labId}`, undefined],
    ["POST", `/api/v1/papers/${id}/publish-loop`, { labId }],
    ["POST", `/api/v1/papers/${id}/transition`, { labId, to: "submitted" }]
  ] as const

  it("422 for invalid bodies and queries, naming the field", async () => {
    const id = (await createPaper({ title: "Target" })).id
    const post = (json: Body) => call("POST", "/api/v1/papers", { labId: lab.id, title: "t", ...json })
    expect(await expectError(await post({ status: "published" }), 422, "validation_error")).toMatch(/status is not a known field/)
    expect(await expectError(await post({ id: "paper_mine" }), 422, "validation_error")).toMatch(/id is not a known field/)
    expect(await expectError(await post({ version: 3 }), 422, "validation_error")).toMatch(/version is not a known field/)
    expect(await expectError(await post({ title: "   " }), 422, "validation_error")).toMatch(/title/)
    expect(await expectError(await post({ title: "x".repeat(501) }), 422, "validation_error")).toMatch(/title/)
    expect(await expectError(await post({ authors: [{ name: "A", orcid: "0000" }] }), 422, "validation_error")).toMatch(/authors\.0\.orcid is not a known field/)
    expect(await expectError(await post({ authors: [{ name: "A", email: "not-an-email" }] }), 422, "validation_error")).toMatch(/authors\.0\.email/)
    expect(await expectError(await post({ authors: Array.from({ length: 101 }, () => ({ name: "A" })) }), 422, "validation_error")).toMatch(/authors/)
    expect(await expectError(await post({ files: ["papers/relative.tex"] }), 422, "validation_error")).toMatch(/files\.0: must start with \//)
    expect(await expectError(await post({ files: ["/a.tex", "/a.tex"] }), 422, "validation_error")).toMatch(/files/)
    expect(await expectError(await call("POST", "/api/v1/papers", { title: "t" }), 422, "validation_error")).toMatch(/labId is required/)

    expect(await expectError(await call("PATCH", `/api/v1/papers/${id}`, { labId: lab.id, status: "accepted" }), 422, "validation_error")).toMatch(
      /status is not a known field/
    )
    expect(await expectError(await call("PATCH", `/api/v1/papers/${id}`, { labId: lab.id, files: "/a.tex" }), 422, "validation_error")).toMatch(/files/)
    expect(await expectError(await move(id, "bogus"), 422, "validation_error")).toMatch(/^to:/)
    expect(await expectError(await call("POST", `/api/v1/papers/${id}/publish-loop`, { labId: lab.id, force: true }), 422, "validation_error")).toMatch(
      /force is not a known field/
    )
    expect(await expectError(await call("GET", `/api/v1/papers?${q({ labId: lab.id, status: "bogus" })}`), 422, "validation_error")).toMatch(/status/)
    expect(await expectError(await call("GET", `/api/v1/papers?${q({ labId: lab.id, from: "yesterday" })}`), 422, "validation_error")).toMatch(/from/)
    expect(await expectError(await call("GET", `/api/v1/papers?${q({ labId: lab.id, limit: 101 })}`), 422, "validation_error")).toMatch(/limit/)
    expect(await expectError(await call("GET", `/api/v1/papers/${id}/versions?${q({ labId: lab.id, cursor: "nope" })}`), 422, "validation_error")).toMatch(
      /cursor/
    )
  })

  it("404 for a missing paper on every route that names one, and for the operator naming a missing lab", async () => {
    await expectMissingOnEveryRoute(fx, routes, "paper_missing", /no paper paper_missing/)
  })

  it("403 for a foreign lab on every route, and for a read-only key writing", async () => {
    const id = (await createPaper({ title: "Guarded" })).id
    await expectGuardedOnEveryRoute(fx, routes, id)
    // the foreign lab's own key cannot reach this paper through its own lab either
    await expectError(await call("GET", `/api/v1/papers/${id}?labId=${other.id}`, undefined, otherKey), 404, "not_found")
  })
})

describe("the OpenAPI document", () => {
  it("describes the papers, datasets and figures routes with their statuses", async () => {
    const Operation = Schema.Struct({ responses: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
    const Document = Schema.Struct({ paths: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Operation }) }) })
    const doc = Schema.decodeUnknownSync(Document)(await (await server.request("GET", "/api/v1/openapi.json")).json())
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort()
    expect(statuses("/api/v1/papers/{id}/publish-loop", "post")).toEqual(expect.arrayContaining(["200", "202", "403", "404", "409", "422"]))
    expect(statuses("/api/v1/papers/{id}/transition", "post")).toEqual(expect.arrayContaining(["200", "403", "404", "409", "422"]))
    expect(statuses("/api/v1/papers/{id}/versions", "get")).toEqual(expect.arrayContaining(["200", "403", "404", "422"]))
    expect(statuses("/api/v1/papers", "post")).toEqual(expect.arrayContaining(["201", "403", "422"]))
    expect(statuses("/api/v1/datasets", "post")).toEqual(expect.arrayContaining(["201", "403", "409", "422"]))
    expect(statuses("/api/v1/datasets/{id}", "patch")).toEqual(expect.arrayContaining(["200", "403", "404", "409", "422"]))
    expect(statuses("/api/v1/figures", "get")).toEqual(expect.arrayContaining(["200", "403", "422"]))
    expect(statuses("/api/v1/figures/{id}", "delete")).toEqual(expect.arrayContaining(["200", "403", "404", "409"]))
  })
})
