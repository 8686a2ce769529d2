import { Schema } from "effect"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { Figure } from "../../src/figures/Figure.js"
import { Lab } from "../../src/labs/Lab.js"
import { Paper, PaperVersion } from "../../src/papers/Paper.js"
import { SyncResult } from "../../src/sync/RepoLink.js"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { data, expectError, json, page } from "../support/http.js"
import { type Fixture, queryOf, startFixture } from "../support/LabFixture.js"
import { expectGuardedOnEveryRoute, expectMissingOnEveryRoute } from "../support/RouteChecks.js"
import type { TestServer } from "../support/TestServer.js"
import { diskGit } from "../support/DiskGit.js"

let git: GitServer
let gitRoot: string
let fx: Fixture
let server: TestServer
let lab: Lab
let writer: { readonly id: string; readonly key: string }
let readerKey: string

type Body = Record<string, unknown>

const call = (method: string, path: string, body?: Body, token = writer.key) =>
  server.request(method, path, body === undefined ? { token } : { token, json: body })

const q = queryOf

const figures = async (labId: string, params: Record<string, string | number | undefined> = {}) =>
  page(await call("GET", `/api/v1/figures?${q({ labId, limit: 100, ...params })}`), Figure)

const register = async (body: Body) => data(await call("POST", "/api/v1/figures", { labId: lab.id, ...body }), Figure, 201)

/** POST /api/v1/sync: a forced pull, answered with its counts. */
const syncNow = async (labId: string) => {
  const response = await call("POST", "/api/v1/sync", { labId }, server.adminKey)
  const body = await json(response)
  expect(response.status, JSON.stringify(body)).toBe(200)
  return Schema.decodeUnknownSync(SyncResult)(body)
}

const put = async (dir: string, path: string, content: string | Uint8Array) => {
  await mkdir(dirname(join(dir, path)), { recursive: true })
  await writeFile(join(dir, path), content)
}

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1])
const PDF = Uint8Array.from([...Buffer.from("%PDF-1.5\n"), 0x00, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a])

beforeAll(async () => {
  git = await startGitServer()
  gitRoot = await mkdtemp(join(tmpdir(), "lab-service-figures-"))
  fx = await startFixture("figures", { git: diskGit(gitRoot, 20_000) })
  server = fx.server
  lab = fx.lab
  writer = { id: fx.writerId, key: fx.writer }
  readerKey = fx.reader
})
afterAll(async () => {
  await fx.close()
  await git.close()
  await rm(gitRoot, { recursive: true, force: true })
})

describe("figures of the linked repository", () => {
  it("lists the images and PDFs the sync skips, with path, size, blob id and commit, and forgets deleted ones", async () => {
    const labId = (await fx.createLab("figures-git")).id
    const url = await git.createRepo("figures-git")
    const wc = await workingCopy(url)
    await put(wc.dir, "README.md", "# paper\n")
    await put(wc.dir, "figures/loss.png", PNG)
    await put(wc.dir, "paper/fig 2.pdf", PDF)
    await put(wc.dir, "node_modules/x/icon.png", PNG)
    const c1 = await wc.commitAndPush("figures")

    const linked = await call("PATCH", "/api/v1/sync", { labId, repo: url, autoPushOnEdit: false }, server.adminKey)
    expect(linked.status).toBe(200)
    expect(await syncNow(labId)).toMatchObject({ sha: c1 })

    const listed = await page(await call("GET", `/api/v1/figures?${q({ labId, source: "git" })}`, undefined, server.adminKey), Figure)
    const byPath = new Map(listed.data.map((f) => [f.path, f]))
    expect([...byPath.keys()].sort()).toEqual(["/figures/loss.png", "/paper/fig 2.pdf"])
    expect(byPath.get("/figures/loss.png")).toMatchObject({
      labId,
      source: "git",
      title: "loss.png",
      url: null,
      mediaType: "image/png",
      size: PNG.byteLength,
      blobId: await wc.git("rev-parse", "HEAD:figures/loss.png"),
      commit: c1,
      experimentId: null
    })
    expect(byPath.get("/paper/fig 2.pdf")).toMatchObject({
      mediaType: "application/pdf",
      size: PDF.byteLength,
      blobId: await wc.git("rev-parse", "HEAD:paper/fig 2.pdf")
    })
    // the binary files are figures, not files of the lab
    await expectError(await call("GET", `/api/v1/files?${q({ labId, path: "/figures/loss.png" })}`, undefined, server.adminKey), 404, "not_found")

    const loss = byPath.get("/figures/loss.png")
    const pdf = byPath.get("/paper/fig 2.pdf")
    if (!loss || !pdf) throw new Error("figures missing")

    // a git figure is deleted in the repository, not through the API
    expect(await expectError(await call("DELETE", `/api/v1/figures/${loss.id}?labId=${labId}`, undefined, server.adminKey), 409, "conflict")).toMatch(
      /delete the file in git/
    )
    // its caption can be set, and it survives a change of the file
    const captioned = await data(await call("PATCH", `/api/v1/figures/${pdf.id}`, { labId, caption: "Figure 2: ablations" }, server.adminKey), Figure)
    expect(captioned.caption).toBe("Figure 2: ablations")

    await rm(join(wc.dir, "figures/loss.png"))
    await put(wc.dir, "paper/fig 2.pdf", Uint8Array.from([...PDF, 0x01]))
    const c2 = await wc.commitAndPush("drop the loss plot, redraw figure 2")
    expect(await syncNow(labId)).toMatchObject({ sha: c2 })
    const after = await page(await call("GET", `/api/v1/figures?${q({ labId })}`, undefined, server.adminKey), Figure)
    expect(after.data.map((f) => f.path)).toEqual(["/paper/fig 2.pdf"])
    expect(after.data[0]).toMatchObject({
      id: pdf.id,
      caption: "Figure 2: ablations",
      size: PDF.byteLength + 1,
      blobId: await wc.git("rev-parse", "HEAD:paper/fig 2.pdf"),
      commit: c2
    })
    await expectError(await call("GET", `/api/v1/figures/${loss.id}?labId=${labId}`, undefined, server.adminKey), 404, "not_found")

    // the sync's figure entries
    const activity = await page(await call("GET", `/api/v1/activity?${q({ labId, limit: 100 })}`, undefined, server.adminKey), Activity)
    expect(activity.data.filter((e) => e.kind === "figure.synced").map((e) => e.data)).toEqual([
      { added: 0, updated: 1, removed: 1, sha: c2.slice(0, 7) },
      { added: 2, updated: 0, removed: 0, sha: c1.slice(0, 7) }
    ])

    // a paper may list a figure from git among its files: the publish loop finds it
    const paper = await data(
      await call("POST", "/api/v1/papers", { labId, title: "With a figure", files: ["/README.md", "/paper/fig 2.pdf"] }, server.adminKey),
      Paper,
      201
    )
    await data(await call("POST", `/api/v1/papers/${paper.id}/publish-loop`, { labId }, server.adminKey), Paper, 202)
    for (let i = 0; ; i++) {
      const current = await data(await call("GET", `/api/v1/papers/${paper.id}?labId=${labId}`, undefined, server.adminKey), Paper)
      if (current.loop.status !== "running") {
        expect(current).toMatchObject({ status: "published", loop: { status: "done" } })
        break
      }
      if (i > 400) throw new Error("the publish loop never finished")
      await new Promise((r) => setTimeout(r, 25))
    }
    const [version] = (await page(await call("GET", `/api/v1/papers/${paper.id}/versions?labId=${labId}`, undefined, server.adminKey), PaperVersion))
      .data
    expect(version?.files.find((f) => f.path === "/paper/fig 2.pdf")).toEqual({
      path: "/paper/fig 2.pdf",
      sha: await wc.git("rev-parse", "HEAD:paper/fig 2.pdf"),
      size: PDF.byteLength + 1
    })
    await wc.remove()
  })
})

describe("registered figures (extension)", () => {
  it("registers a figure at a lab path or a url (201), lists, filters, reads, edits and deletes it, with activity", async () => {
    const before = await register({ title: "Baseline", url: "https://wandb.ai/lab/run/abc/panel" })
    expect(before).toMatchObject({ source: "api", url: "https://wandb.ai/lab/run/abc/panel", path: null, mediaType: null, experimentId: null })

    // a figure names an experiment of the lab (tested with other labs' and missing ids in cross-lab-references.test.ts)
    const experiment = await data(await call("POST", "/api/v1/experiments", { labId: lab.id, name: "baseline" }), Schema.Struct({ id: Schema.String }), 201)
    const loss = await register({ experimentId: experiment.id, title: " Training loss ", path: "/results//loss.PNG", caption: "Loss per step" })
    expect(loss).toMatchObject({
      labId: lab.id,
      source: "api",
      title: "Training loss",
      path: "/results/loss.PNG",
      url: null,
      mediaType: "image/png",
      caption: "Loss per step",
      experimentId: experiment.id,
      size: null,
      blobId: null,
      commit: null
    })
    expect(loss.id).toMatch(/^fig_/)
    const chart = await register({ experimentId: experiment.id, title: "Accuracy", url: "https://example.org/charts/acc.svg?v=2" })
    expect(chart.mediaType).toBe("image/svg+xml")

    const all = await figures(lab.id)
    expect(all.data.slice(0, 3).map((f) => f.id)).toEqual([chart.id, loss.id, before.id])
    expect((await figures(lab.id, { experimentId: experiment.id })).data.map((f) => f.id)).toEqual([chart.id, loss.id])
    expect((await figures(lab.id, { source: "git" })).data).toEqual([])
    expect((await figures(lab.id, { from: loss.createdAt.toISOString() })).data.map((f) => f.id)).toEqual([chart.id, loss.id])
    const first = await page(await call("GET", `/api/v1/figures?${q({ labId: lab.id, limit: 2 })}`, undefined, readerKey), Figure)
    expect(first.data.map((f) => f.id)).toEqual([chart.id, loss.id])
    const second = await page(await call("GET", `/api/v1/figures?${q({ labId: lab.id, limit: 2, cursor: first.meta.next_cursor ?? undefined })}`), Figure)
    expect(second.data.map((f) => f.id)).toEqual([before.id])

    expect(await data(await call("GET", `/api/v1/figures/${loss.id}?labId=${lab.slug}`, undefined, readerKey), Figure)).toEqual(loss)
    const edited = await data(await call("PATCH", `/api/v1/figures/${loss.id}`, { labId: lab.id, title: "Loss", caption: null, experimentId: null }), Figure)
    expect(edited).toMatchObject({ title: "Loss", caption: null, experimentId: null, path: "/results/loss.PNG" })
    // nothing new: nothing changes
    expect(await data(await call("PATCH", `/api/v1/figures/${loss.id}`, { labId: lab.id, title: "Loss" }), Figure)).toEqual(edited)
    expect(await data(await call("DELETE", `/api/v1/figures/${loss.id}?labId=${lab.id}`), Figure)).toEqual(edited)
    await expectError(await call("GET", `/api/v1/figures/${loss.id}?labId=${lab.id}`), 404, "not_found")

    const activity = await page(await call("GET", `/api/v1/activity?${q({ labId: lab.id, limit: 100 })}`), Activity)
    const mine = activity.data.filter((e) => e.ref === loss.id).reverse()
    expect(mine.map((e) => [e.kind, e.actor])).toEqual([
      ["figure.created", writer.id],
      ["figure.updated", writer.id],
      ["figure.deleted", writer.id]
    ])
    expect(mine[1]?.data).toMatchObject({ changed: ["title", "caption", "experimentId"] })
  })
})

describe("errors on every route", () => {
  const routes = (id: string, labId: string) => [
    ["GET", `/api/v1/figures?labId=${labId}`, undefined],
    ["POST", "/api/v1/figures", { labId, title: "t", url: "https://example.org/x.png" }],
    ["GET", `/api/v1/figures/${id}?labId=${labId}`, undefined],
    ["PATCH", `/api/v1/figures/${id}`, { labId, caption: "c" }],
    ["DELETE", `/api/v1/figures/${id}?labId=${labId}`, undefined]
  ] as const

  it("422 for invalid bodies and queries, naming the field", async () => {
    const bad = async (body: Body, message: RegExp) =>
      expect(await expectError(await call("POST", "/api/v1/figures", { labId: lab.id, title: "t", ...body }), 422, "validation_error")).toMatch(message)
    await bad({ path: "/a.png", url: "https://example.org/a.png" }, /^url: give either path or url, not both$/)
    await bad({}, /^path: give either path \(a lab file\) or url$/)
    await bad({ path: "/notes/a.md" }, /path: must name a figure file/)
    await bad({ path: "figures/a.png" }, /path: must start with \//)
    await bad({ url: "ftp://example.org/a.png" }, /url: must be an http\(s\) URL/)
    await bad({ url: "https://u:p@example.org/a.png" }, /url: must not carry credentials/)
    await bad({ url: "https://example.org/a.png", source: "git" }, /source is not a known field/)
    await bad({ url: "https://example.org/a.png", blobId: "abc" }, /blobId is not a known field/)
    await bad({ url: "https://example.org/a.png", title: "" }, /title/)
    await bad({ url: "https://example.org/a.png", experimentId: "exp 1; drop" }, /experimentId: must be an experiment id/)
    await bad({ url: "https://example.org/a.png", caption: "x".repeat(5_001) }, /caption/)

    const figure = await register({ title: "Target", url: "https://example.org/t.png" })
    expect(await expectError(await call("PATCH", `/api/v1/figures/${figure.id}`, { labId: lab.id, path: "/b.png" }), 422, "validation_error")).toMatch(
      /path is not a known field/
    )
    expect(await expectError(await call("PATCH", `/api/v1/figures/${figure.id}`, { labId: lab.id, title: null }), 422, "validation_error")).toMatch(/title/)
    expect(await expectError(await call("GET", `/api/v1/figures?${q({ labId: lab.id, source: "disk" })}`), 422, "validation_error")).toMatch(/source/)
    expect(await expectError(await call("GET", `/api/v1/figures?${q({ labId: lab.id, cursor: "zzz" })}`), 422, "validation_error")).toMatch(/cursor/)
  })

  it("404 for a missing figure, and for the operator naming a missing lab", async () => {
    await expectMissingOnEveryRoute(fx, routes, "fig_missing", /no figure fig_missing/)
  })

  it("403 for a foreign lab on every route, and for a read-only key writing", async () => {
    const figure = await register({ title: "Guarded", url: "https://example.org/g.png" })
    await expectGuardedOnEveryRoute(fx, routes, figure.id)
  })
})
