import { Effect, Schema } from "effect"
import { mkdir, rm, mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { json } from "../support/http.js"
import { createdId, data, expectError, expectInvalid, type Fixture, MISSING, page, startFixture, walk, WithId } from "../support/LabFixture.js"
import { diskGit } from "../support/DiskGit.js"

const Result = Schema.Struct({
  kind: Schema.Literal("files", "papers", "knowledge", "memory", "tasks", "experiments"),
  ref: Schema.String,
  title: Schema.String,
  snippet: Schema.String,
  rank: Schema.Number
})
type Result = typeof Result.Type
const Written = Schema.Struct({ path: Schema.String })

const PATH = "/api/v1/search"
let fx: Fixture
let git: GitServer
let gitRoot: string
const ids: Record<string, string> = {}

const search = async (params: Record<string, string | number | undefined>, token?: string) =>
  (await page(await fx.get(PATH, { labId: fx.lab.id, limit: 100, ...params }, token), Result)).data
const refs = (results: ReadonlyArray<Result>) => results.map((r) => `${r.kind}:${r.ref}`)

const create = (path: string, body: Record<string, unknown>, labId = fx.lab.id, token = fx.writer) => createdId(fx, path, body, labId, token)
/** PATCH a record of the lab as the writer, expecting 200. */
const update = async (path: string, body: Record<string, unknown>) => data(await fx.patch(path, { labId: fx.lab.id, ...body }), WithId)
const writeFileApi = async (path: string, content: string) =>
  data(await fx.post("/api/v1/files", { labId: fx.lab.id, path, content }), Written, 201)

beforeAll(async () => {
  git = await startGitServer()
  gitRoot = await mkdtemp(join(tmpdir(), "lab-search-git-"))
  fx = await startFixture("search", { git: diskGit(gitRoot, 10_000) })
  ids["taskLr"] = await create("/api/v1/tasks", { title: "Tune the learning rate schedule", description: "Try cosine decay with warmup" })
  ids["taskRelated"] = await create("/api/v1/tasks", { title: "Write the related work section", description: "Mention transformers and attention" })
  ids["paper"] = await create("/api/v1/papers", {
    title: "Attention is all you need, again",
    abstract: "We revisit self-attention in transformers and measure attention entropy."
  })
  ids["knowledge"] = await create("/api/v1/knowledge", {
    title: "Warmup stabilises training",
    body: "A learning rate warmup of 500 steps avoids early divergence."
  })
  const agent = await create("/api/v1/agents", { name: "Ada", model: "claude-sonnet-4" })
  ids["memory"] = await create("/api/v1/memory", {
    agentId: agent,
    kind: "observation",
    content: "The cosine schedule beat linear decay on CIFAR-10\nSecond line of detail"
  })
  ids["experiment"] = await create("/api/v1/experiments", {
    name: "lr-sweep",
    description: "A sweep of learning rates",
    hypothesis: "Cosine decay with warmup converges faster"
  })
  await writeFileApi("/notes/attention-analysis.md", "# Attention heads\n\nWe analyse attention heads in transformers; attention entropy drops during training.\n")
  await writeFileApi("/src/model.py", "class Transformer:\n    # linear learning rate warmup, then cosine\n    pass\n")
  await writeFileApi("/notes/unsafe.md", "if a < b && c > d then \"quirky\" <script>alert('x')</script>\n")
  // the other lab has matching documents too
  await create("/api/v1/tasks", { title: "Warmup in the other lab", description: "attention" }, fx.other.id, fx.stranger)
}, 180_000)
afterAll(async () => {
  await fx?.close()
  await git?.close()
  await rm(gitRoot, { recursive: true, force: true })
})

describe("GET /api/v1/search", () => {
  it("indexes the six kinds through triggers on their tables (files through the queue's)", async () => {
    const tables = await fx.server.sql((sql) =>
      Effect.map(
        sql<{ table: string }>`SELECT DISTINCT c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          WHERE t.tgname IN ('search_index', 'search_index_update', 'search_queue_inserted', 'search_queue_updated', 'search_queue_deleted')
          ORDER BY 1`,
        (rows) => rows.map((r) => r.table)
      )
    )
    expect(tables).toEqual(["experiments", "files", "knowledge", "memory", "papers", "tasks"])
  })

  it("finds every kind, ranked: a match in the title beats one in the body", async () => {
    const results = await search({ q: "warmup" })
    expect(refs(results).sort()).toEqual(
      [
        `tasks:${ids["taskLr"]}`,
        `knowledge:${ids["knowledge"]}`,
        `experiments:${ids["experiment"]}`,
        "files:/src/model.py"
      ].sort()
    )
    expect(results[0]).toMatchObject({ kind: "knowledge", ref: ids["knowledge"], title: "Warmup stabilises training" })
    const ranks = results.map((r) => r.rank)
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks)
    for (const r of results) expect(r.rank).toBeGreaterThan(0)
    for (const r of results) expect(r.rank).toBeLessThan(1)

    expect(refs(await search({ q: "cosine" })).sort()).toEqual(
      [`tasks:${ids["taskLr"]}`, `memory:${ids["memory"]}`, `experiments:${ids["experiment"]}`, "files:/src/model.py"].sort()
    )
    const paper = (await search({ q: "self-attention entropy" })).map((r) => r.kind)
    expect(paper[0]).toBe("papers")
  })

  it("returns titles and snippets with the matches marked, as safe HTML", async () => {
    const [memory] = await search({ q: "CIFAR", kinds: "memory" })
    expect(memory).toMatchObject({ kind: "memory", title: "The cosine schedule beat linear decay on CIFAR-10" })
    expect(memory?.snippet).toContain("<mark>CIFAR</mark>-10")
    const [experiment] = await search({ q: "converges", kinds: "experiments" })
    expect(experiment).toMatchObject({ title: "lr-sweep" })
    expect(experiment?.snippet).toContain("<mark>converges</mark>")
    const [unsafe] = await search({ q: "quirky" })
    expect(unsafe).toMatchObject({ kind: "files", ref: "/notes/unsafe.md", title: "/notes/unsafe.md" })
    expect(unsafe?.snippet).toContain("<mark>quirky</mark>")
    expect(unsafe?.snippet).toContain("a &lt; b &amp;&amp; c &gt; d")
    expect(unsafe?.snippet).toContain("&quot;")
    expect(unsafe?.snippet).not.toContain("<script>")
    // deep in a long file: the snippet is cut around the match, not from the start
    const long = `${"Nothing to see in this line of filler text.\n".repeat(2000)}At last a serendipitous finding.\n`
    await writeFileApi("/notes/long.md", long)
    const [deep] = await search({ q: "serendipitous" })
    expect(deep).toMatchObject({ kind: "files", ref: "/notes/long.md" })
    expect(deep?.snippet).toContain("<mark>serendipitous</mark>")
  })

  it("stems, and understands phrases, or and exclusions (web search syntax)", async () => {
    expect(refs(await search({ q: "analysing heads" }))).toEqual(["files:/notes/attention-analysis.md"])
    expect(refs(await search({ q: '"attention heads"' }))).toEqual(["files:/notes/attention-analysis.md"])
    const attention = refs(await search({ q: "attention -entropy" }))
    expect(attention).toEqual([`tasks:${ids["taskRelated"]}`])
    expect(refs(await search({ q: "quirky or CIFAR" })).sort()).toEqual([`memory:${ids["memory"]}`, "files:/notes/unsafe.md"].sort())
    // a file is found by the words of its path
    expect(refs(await search({ q: "analysis", kinds: "files" }))).toEqual(["files:/notes/attention-analysis.md"])
    // stop words only: nothing to look for
    expect(await search({ q: "the and of" })).toEqual([])
  })

  it("filters by kinds", async () => {
    const results = await search({ q: "warmup", kinds: "files,tasks" })
    expect(new Set(results.map((r) => r.kind))).toEqual(new Set(["files", "tasks"]))
    expect(refs(await search({ q: "attention", kinds: " papers " }))).toEqual([`papers:${ids["paper"]}`])
  })

  it("pages on (rank, kind, ref): pages of 2 walk the same ranked list", async () => {
    const all = await search({ q: "attention OR warmup OR cosine" })
    expect(all.length).toBeGreaterThan(5)
    const paged = await walk(fx, PATH, { labId: fx.lab.id, q: "attention OR warmup OR cosine" }, Result, 2)
    expect(refs(paged)).toEqual(refs(all))
  })

  it("follows writes: a file written is found, rewritten is found by its new words only, deleted is gone", async () => {
    await writeFileApi("/notes/zanzibar.md", "Field notes from Zanzibar about spice markets\n")
    expect(refs(await search({ q: "zanzibar" }))).toEqual(["files:/notes/zanzibar.md"])
    await data(await fx.post("/api/v1/files", { labId: fx.lab.id, path: "/notes/zanzibar.md", content: "Now about Madagascar\n" }), Written)
    expect(refs(await search({ q: "spice" }))).toEqual([])
    expect(refs(await search({ q: "madagascar" }))).toEqual(["files:/notes/zanzibar.md"])
    await data(await fx.del("/api/v1/files", { labId: fx.lab.id, path: "/notes/zanzibar.md" }), Written)
    expect(await search({ q: "madagascar" })).toEqual([])
  })

  it("follows updates and deletes of records", async () => {
    await update(`/api/v1/knowledge/${ids["knowledge"]}`, { title: "Warmup stabilises training, also with Adafactor" })
    expect(refs(await search({ q: "adafactor" }))).toEqual([`knowledge:${ids["knowledge"]}`])
    const doomed = await create("/api/v1/tasks", { title: "Ephemeral xylophone task" })
    expect(refs(await search({ q: "xylophone" }))).toEqual([`tasks:${doomed}`])
    expect((await fx.del(`/api/v1/tasks/${doomed}`, { labId: fx.lab.id })).status).toBe(200)
    expect(await search({ q: "xylophone" })).toEqual([])

    await update(`/api/v1/experiments/${ids["experiment"]}`, { hypothesis: "Cosine decay with warmup converges faster than the trapezoid schedule" })
    expect(refs(await search({ q: "trapezoid" }))).toEqual([`experiments:${ids["experiment"]}`])

    const memory = await create("/api/v1/memory", { agentId: await create("/api/v1/agents", { name: "Bo", model: "m" }), kind: "fact", content: "Fleeting vuvuzela memory" })
    const paper = await create("/api/v1/papers", { title: "A vuvuzela paper" })
    expect(refs(await search({ q: "vuvuzela" })).sort()).toEqual([`memory:${memory}`, `papers:${paper}`].sort())
    expect((await fx.del(`/api/v1/memory/${memory}`, { labId: fx.lab.id })).status).toBe(200)
    expect((await fx.del(`/api/v1/papers/${paper}`, { labId: fx.lab.id })).status).toBe(200)
    expect(await search({ q: "vuvuzela" })).toEqual([])
  })

  it("follows git sync: a pulled file is found, a file removed upstream is gone", async () => {
    const url = await git.createRepo("search-sync")
    const wc = await workingCopy(url)
    const put = async (path: string, content: string) => {
      await mkdir(dirname(join(wc.dir, path)), { recursive: true })
      await writeFile(join(wc.dir, path), content)
    }
    await put("docs/quokka.md", "# Quokka survey\n\nQuokkas are small marsupials.\n")
    await wc.commitAndPush("add quokka notes")
    const linked = await fx.server.request("PATCH", "/api/v1/sync", { token: fx.writer, json: { labId: fx.lab.id, repo: url } })
    expect(linked.status, JSON.stringify(await json(linked))).toBe(200)
    const pulled = await fx.post("/api/v1/sync", { labId: fx.lab.id })
    expect(pulled.status, JSON.stringify(await json(pulled))).toBe(200)
    expect(refs(await search({ q: "marsupials" }))).toEqual(["files:/docs/quokka.md"])

    await rm(join(wc.dir, "docs/quokka.md"))
    await put("docs/wombat.md", "Wombats are marsupials too\n")
    await wc.commitAndPush("quokka out, wombat in")
    expect((await fx.post("/api/v1/sync", { labId: fx.lab.id })).status).toBe(200)
    expect(refs(await search({ q: "marsupials" }))).toEqual(["files:/docs/wombat.md"])
    await wc.remove()
  })

  it("keeps labs apart", async () => {
    expect((await search({ q: "warmup" })).some((r) => r.title.includes("other lab"))).toBe(false)
    const theirs = (await page(await fx.get(PATH, { labId: fx.other.id, q: "warmup" }, fx.stranger), Result)).data
    expect(theirs.map((r) => r.title)).toEqual(["Warmup in the other lab"])
  })

  it("answers 422 for bad parameters, 403 for a foreign lab, 404 for the operator on a missing lab", async () => {
    const lab = fx.lab.id
    await expectInvalid(await fx.get(PATH, { labId: lab }), "q")
    await expectInvalid(await fx.get(PATH, { labId: lab, q: "   " }), "q")
    await expectInvalid(await fx.get(PATH, { labId: lab, q: "x".repeat(501) }), "q")
    await expectInvalid(await fx.get(PATH, { labId: lab, q: "x", kinds: "files,emails" }), "kinds")
    await expectInvalid(await fx.get(PATH, { labId: lab, q: "x", kinds: "" }), "kinds")
    await expectInvalid(await fx.get(PATH, { labId: lab, q: "x", cursor: "bogus" }), "cursor")
    await expectInvalid(await fx.get(PATH, { labId: lab, q: "x", limit: 0 }), "limit")
    await expectError(await fx.get(PATH, { labId: lab, q: "warmup" }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(PATH, { labId: MISSING, q: "warmup" }, fx.server.adminKey), 404, "not_found")
    expect((await search({ q: "warmup" }, fx.reader)).length).toBeGreaterThan(0)
  })
})
