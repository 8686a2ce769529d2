/**
 * The Python client's own unittest suite (clients/python/tests) against a real server: errors, pagination, retries
 * through a proxy the tests start, timeouts. Skipped, saying so, where python3 is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Fixture, startFixture } from "../support/LabFixture.js"
import { hasPython, runPython } from "./PythonRun.js"

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
