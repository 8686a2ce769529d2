/**
 * The Python client's own unittest suite (clients/python/tests) against a real server: errors, pagination, retries
 * through a proxy the tests start, timeouts. Skipped, saying so, where python3 is missing.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildModel } from "../../scripts/clients/Model.js"
import { renderPython } from "../../scripts/clients/python.js"
import { type Fixture, startFixture } from "../support/LabFixture.js"
import { hasPython, repositoryRoot, runPython } from "./PythonRun.js"

describe("the Python client's generated code", () => {
  it("is what npm run clients makes from the contract now, in lab_service/_generated only", () => {
    const files = renderPython(buildModel())
    expect(files.map((f) => f.path).sort()).toEqual(
      ["__init__.py", "async_resources.py", "client.py", "models.py", "resources.py"].map((f) => `clients/python/lab_service/_generated/${f}`)
    )
    for (const file of files) expect(readFileSync(path.join(repositoryRoot, file.path), "utf8"), file.path).toBe(file.text)
  })

  it("offers the routes the contract names, with snake_case arguments and docstrings", () => {
    const model = buildModel()
    const resources = renderPython(model).find((f) => f.path.endsWith("/resources.py"))?.text ?? ""
    for (const cls of ["TasksResource", "FilesResource", "SyncResource", "ExperimentsQueuesResource"]) {
      expect(resources).toContain(`class ${cls}:`)
    }
    expect(resources).toMatch(/def write\(\n\s+self,\n\s+\*,\n\s+path: str,\n\s+content: str,\n\s+lab_id: Optional\[str\] = None,\n\s+expected_sha: Optional\[str\] = None,/)
    expect(resources).toContain('"sha": expected_sha')
    // the contract's summary of an operation opens its docstring
    const summary = model.operations.find((op) => op.operationId === "experiments.list")?.summary
    expect(summary).toBeTruthy()
    expect(resources).toContain(`"""${summary}`)
  })
})

describe.skipIf(!hasPython)("the Python client (python3 -m unittest discover -s clients/python/tests)", () => {
  let fx: Fixture
  beforeAll(async () => {
    fx = await startFixture("pyclient")
  }, 120_000)
  afterAll(() => fx?.close())

  it("passes every test against the running server, none skipped", async () => {
    const run = await runPython(["-m", "unittest", "discover", "-s", "tests", "-v"], {
      LAB_SERVICE_BASE_URL: fx.server.baseUrl,
      LAB_SERVICE_API_KEY: fx.writer,
      LAB_SERVICE_TEST_READER_KEY: fx.reader,
      LAB_SERVICE_LAB_ID: fx.lab.id
    })
    if (run.code !== 0) console.error(run.output)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toMatch(/Ran \d+ tests/)
    expect(run.output).not.toMatch(/skipped/)
  }, 300_000)
})
