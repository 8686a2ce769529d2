/**
 * examples/quickstart.ipynb runs, code cell after code cell, with the standard library's python3 alone (no Jupyter)
 * against a server whose lab is linked to a real git host (git http-backend on loopback), so its sync cell pulls.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { File } from "../../src/files/File.js"
import { diskGit } from "../support/DiskGit.js"
import { type GitServer, startGitServer } from "../support/GitServer.js"
import { data } from "../support/http.js"
import { type Fixture, startFixture } from "../support/LabFixture.js"
import { repoWith } from "../support/SyncServer.js"
import { hasPython, repositoryRoot, runPython } from "./PythonRun.js"

const Notebook = Schema.Struct({
  cells: Schema.Array(Schema.Struct({ cell_type: Schema.String, source: Schema.Union(Schema.String, Schema.Array(Schema.String)) }))
})

/** The notebook's code cells, in order, as one script. */
const codeOf = async (file: string): Promise<string> => {
  const notebook = Schema.decodeUnknownSync(Notebook)(JSON.parse(await readFile(file, "utf8")))
  const cells = notebook.cells.filter((cell) => cell.cell_type === "code")
  return cells.map((cell) => (typeof cell.source === "string" ? cell.source : cell.source.join(""))).join("\n\n")
}

describe.skipIf(!hasPython)("examples/quickstart.ipynb", () => {
  let git: GitServer
  let root: string
  let fx: Fixture
  beforeAll(async () => {
    git = await startGitServer()
    root = await mkdtemp(path.join(tmpdir(), "notebook-"))
    fx = await startFixture("notebook", { git: diskGit(root) })
  }, 120_000)
  afterAll(async () => {
    await fx?.close()
    await git?.close()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it("runs its code cells in order: task, experiment and metrics, file, sync of the linked repository, search", async () => {
    const { url } = await repoWith(git, "quickstart", { "results/sweep.md": "# Sweep\n\nlr=0.01 converges.\n" })
    const linked = await fx.patch("/api/v1/sync", { labId: fx.lab.id, repo: url, autoPushOnEdit: false })
    expect(linked.status, await linked.clone().text()).toBe(200)

    const script = await codeOf(path.join(repositoryRoot, "examples", "quickstart.ipynb"))
    const run = await runPython(["-"], {
      LAB_SERVICE_BASE_URL: fx.server.baseUrl,
      LAB_SERVICE_API_KEY: fx.writer,
      LAB_SERVICE_LAB_ID: fx.lab.id
    }, { input: script, cwd: repositoryRoot })
    if (run.code !== 0) console.error(run.output)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain("completed [(0, 0.92), (1, 0.61), (2, 0.44)]")
    expect(run.output).toMatch(/synced http:\/\/127\.0\.0\.1:\d+\/\S*quickstart\S*: \d+ pulled/)
    expect(run.output).toMatch(/files\s+\/notes\/quickstart\.md/)
    // what the notebook wrote is in the lab, and the repository's file came in with the sync
    const note = await data(await fx.get("/api/v1/files", { labId: fx.lab.id, path: "/notes/quickstart.md" }), File)
    expect(note.content).toContain("lr=0.01")
    const synced = await data(await fx.get("/api/v1/files", { labId: fx.lab.id, path: "/results/sweep.md" }), File)
    expect(synced.fromGit).toBe(true)
  }, 300_000)
})
