/**
 * The OpenAPI document reads well: what `npx @redocly/cli lint --extends recommended` checks, on the document the
 * service serves. The rules of OpenApiRules.ts run always; Redocly itself runs when `@redocly/cli` is installed.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { problemsOf } from "./OpenApiRules.js"

let server: TestServer
let served: unknown

beforeAll(async () => {
  server = await startTestServer()
  const response = await server.request("GET", "/api/v1/openapi.json")
  expect(response.status).toBe(200)
  served = await response.json()
}, 60_000)
afterAll(() => server.close())

type Json = Record<string, unknown>
const isJson = (u: unknown): u is Json => typeof u === "object" && u !== null

/** The object at `keys` under `value` (array items by their index). */
const at = (value: unknown, ...keys: ReadonlyArray<string>): Json => {
  const found = keys.reduce<unknown>((current, key) => (isJson(current) ? current[key] : undefined), value)
  if (!isJson(found)) throw new Error(`no object at ${keys.join(" ")}`)
  return found
}

/** A deep copy of the served document, changed by `change`. */
const changed = (change: (doc: Json) => void): unknown => {
  const copy = at(structuredClone(served))
  change(copy)
  return copy
}

describe("the OpenAPI document", () => {
  it("passes the recommended ruleset: summaries, descriptions, tags, servers, responses, components", () => {
    expect(problemsOf(served)).toEqual([])
  })

  it("the rules find what Redocly finds: a missing summary or description, an undescribed tag, no server", () => {
    const broken = changed((doc) => {
      delete at(doc, "paths", "/api/v1/tasks", "get")["summary"]
      at(doc, "paths", "/api/v1/files", "post")["description"] = " "
      delete at(doc, "tags", "0")["description"]
      doc["servers"] = []
      at(doc, "paths", "/api/v1/labs", "get")["operationId"] = "tasks.list"
    })
    const rules = problemsOf(broken).map((problem) => problem.split(":")[0])
    expect(rules).toEqual(
      expect.arrayContaining([
        "operation-summary",
        "operation-description",
        "tag-description",
        "no-empty-servers",
        "operation-operationId-unique"
      ])
    )
  })

  it("lists the server it is served by", () => {
    const { servers } = Schema.decodeUnknownSync(Schema.Struct({ servers: Schema.Array(Schema.Struct({ url: Schema.String })) }))(served)
    expect(servers.map((s) => s.url)).toEqual(["/"])
  })

  it("lists PUBLIC_BASE_URL as its server when it is configured", async () => {
    const configured = await startTestServer({ documentServer: new URL("https://labs.example.org/lab-service/") })
    try {
      const document: unknown = await (await configured.request("GET", "/api/v1/openapi.json")).json()
      expect(at(document, "servers", "0")["url"]).toBe("https://labs.example.org/lab-service")
      expect(problemsOf(document)).toEqual([])
      // the docs page's "try it" goes there too
      expect(await (await configured.request("GET", "/docs")).text()).toContain("https://labs.example.org/lab-service")
    } finally {
      await configured.close()
    }
  }, 60_000)

  it("shows the operations' summaries and descriptions on the docs page", async () => {
    const page = await (await server.request("GET", "/docs")).text()
    expect(page).toContain("List tasks")
    expect(page).toContain("optionally only those in one `status`")
    expect(page).toContain("Probes for load balancers and orchestrators")
  })
})

const require = createRequire(import.meta.url)
const redocly = ((): string | undefined => {
  try {
    return require.resolve("@redocly/cli/bin/cli.js")
  } catch {
    return undefined
  }
})()

const LintReport = Schema.Struct({
  totals: Schema.Struct({ errors: Schema.Number, warnings: Schema.Number }),
  problems: Schema.Array(Schema.Struct({ ruleId: Schema.String, severity: Schema.String, message: Schema.String }))
})

/** Redocly's lint of `document` with the recommended ruleset, as JSON. */
const lint = async (cli: string, document: unknown) => {
  const dir = await mkdtemp(join(tmpdir(), "openapi-lint-"))
  try {
    const file = join(dir, "openapi.json")
    await writeFile(file, JSON.stringify(document))
    const stdout = await new Promise<string>((resolve) =>
      // exits 1 when it finds an error: the report on stdout is the answer either way
      execFile(
        process.execPath,
        [cli, "lint", "--extends", "recommended", "--format", "json", file],
        { env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }, maxBuffer: 64 * 1024 * 1024 },
        (_error, out) => resolve(out)
      )
    )
    return Schema.decodeUnknownSync(Schema.parseJson(LintReport))(stdout)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe.skipIf(redocly === undefined)("Redocly's recommended lint", () => {
  it("finds no error, and no warning but the absent license", async () => {
    const report = await lint(redocly ?? "", served)
    // the service is not published under a license, so the document names none (info-license stays a warning)
    const problems = report.problems.filter((p) => p.ruleId !== "info-license").map((p) => `${p.ruleId}: ${p.message}`)
    expect(problems).toEqual([])
    expect(report.totals.errors).toBe(0)
  }, 60_000)

  it("fails a document without summaries or servers", async () => {
    const report = await lint(
      redocly ?? "",
      changed((doc) => {
        delete at(doc, "paths", "/api/v1/tasks", "get")["summary"]
        delete doc["servers"]
      })
    )
    expect(report.problems.filter((p) => p.severity === "error").map((p) => p.ruleId).sort()).toEqual(["no-empty-servers", "operation-summary"])
  }, 60_000)
})
