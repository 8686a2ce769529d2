/**
 * MCP benchmark: a tool call beside the REST request it stands for, paired in one run on the same service (a child
 * process as `npm start` runs it): `read_file` against `GET /api/v1/files?path=`, and `list_tasks` against
 * `GET /api/v1/tasks`, each over one keep-alive connection, rounds alternating which goes first. For each pair it
 * prints the median latency and the service's CPU per request (from /proc) of both sides and their ratios, per round
 * and overall (the median of the rounds' ratios). Target (issue 22): a tool call at most 1.3x its REST request.
 *
 *   npm run bench:mcp                        embedded PGlite, then PostgreSQL when DATABASE_URL is set
 *
 * Knobs: BENCH_ROUNDS (6), BENCH_REQUESTS (requests per side per round, 400), BENCH_DBS (pglite,postgresql).
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { treeCpuMs } from "./bench/Cpu.js"
import { fmt, median, table } from "./bench/Report.js"
import { type Service, serviceRunner } from "./bench/Service.js"
import { describe, makeHousekeeping, redactUrl } from "./bench/Util.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? "6")
const REQUESTS = Number(process.env["BENCH_REQUESTS"] ?? "400")
const DBS = (process.env["BENCH_DBS"] ?? "pglite,postgresql").split(",")
const TARGET = 1.3

const housekeeping = makeHousekeeping("the service")
const { tempDirs, cleanupAll, stopChild } = housekeeping
const { startService, freshSchema } = serviceRunner(housekeeping, { root: ROOT })

const Created = Schema.Struct({ data: Schema.Struct({ id: Schema.String, slug: Schema.optional(Schema.String), key: Schema.optional(Schema.String) }) })

const call = async (service: Service, token: string, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: json === undefined ? undefined : JSON.stringify(json)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
  return text
}

interface Side {
  readonly label: string
  readonly send: () => Promise<string>
}

/** `n` requests one after another; each answer checked to be a success; latencies in ms and the service's CPU ms. */
const run = async (service: Service, side: Side, n: number) => {
  const latencies: Array<number> = []
  const cpuBefore = treeCpuMs(service.pid)
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    const body = await side.send()
    latencies.push(performance.now() - started)
    if (body.includes('"isError":true')) throw new Error(`${side.label}: ${body.slice(0, 300)}`)
  }
  return { median: median(latencies), cpuPerRequest: (treeCpuMs(service.pid) - cpuBefore) / n }
}

const measure = async (label: string, databaseUrl: string | undefined) => {
  const adminKey = `bench-admin-${randomBytes(8).toString("hex")}`
  const dataDir = mkdtempSync(join(tmpdir(), "bench-mcp-"))
  tempDirs.add(dataDir)
  const service = await startService(dataDir, adminKey, databaseUrl, label, join(dataDir, "service.log"), { LOG_LEVEL: "Warning" })
  try {
    const lab = Schema.decodeUnknownSync(Schema.parseJson(Created))(
      await call(service, adminKey, "POST", "/api/v1/labs", { slug: `bench-mcp-${randomBytes(3).toString("hex")}`, name: "Bench", plan: "team" })
    ).data
    // the operator's key: a lab key's plan allows 1,000 requests a minute, fewer than a run makes (both sides alike)
    const key = adminKey
    const content = "# Notes\n\n" + "a line of a lab notebook\n".repeat(200)
    await call(service, key, "POST", "/api/v1/files", { labId: lab.id, path: "/notes/bench.md", content })
    for (let i = 0; i < 30; i++) await call(service, key, "POST", "/api/v1/tasks", { labId: lab.id, title: `task ${i}` })
    const mcp = (name: string, args: Record<string, unknown>) => () =>
      call(service, key, "POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }, {
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18"
      })
    const pairs: ReadonlyArray<readonly [Side, Side]> = [
      [
        { label: "GET /files?path=", send: () => call(service, key, "GET", `/api/v1/files?labId=${lab.id}&path=/notes/bench.md`) },
        { label: "read_file", send: mcp("read_file", { labId: lab.id, path: "/notes/bench.md" }) }
      ],
      [
        { label: "GET /tasks?limit=20", send: () => call(service, key, "GET", `/api/v1/tasks?labId=${lab.id}&limit=20`) },
        { label: "list_tasks", send: mcp("list_tasks", { labId: lab.id, limit: 20 }) }
      ]
    ]
    const rows: Array<Array<string>> = []
    for (const [rest, tool] of pairs) {
      await run(service, rest, 100)
      await run(service, tool, 100)
      const latencyRatios: Array<number> = []
      const cpuRatios: Array<number> = []
      for (let round = 0; round < ROUNDS; round++) {
        // alternate which side goes first, so neither always meets a warmer or a busier machine
        const [a, b] = round % 2 === 0 ? [rest, tool] : [tool, rest]
        const first = await run(service, a, REQUESTS)
        const second = await run(service, b, REQUESTS)
        const [r, t] = round % 2 === 0 ? [first, second] : [second, first]
        latencyRatios.push(t.median / r.median)
        cpuRatios.push(t.cpuPerRequest / r.cpuPerRequest)
        rows.push([label, `${tool.label} / ${rest.label}`, String(round + 1), fmt(r.median, 2), fmt(t.median, 2), fmt(t.median / r.median, 2), fmt(r.cpuPerRequest, 3), fmt(t.cpuPerRequest, 3), fmt(t.cpuPerRequest / r.cpuPerRequest, 2)])
      }
      const latency = median(latencyRatios)
      const cpu = median(cpuRatios)
      rows.push([label, `${tool.label} / ${rest.label}`, "median", "", "", fmt(latency, 2), "", "", fmt(cpu, 2)])
      console.log(`${label}: ${tool.label} against ${rest.label}: latency ${fmt(latency, 2)}x, CPU ${fmt(cpu, 2)}x (target at most ${TARGET}x): ${latency <= TARGET && cpu <= TARGET ? "met" : "missed"}`)
    }
    return rows
  } finally {
    await stopChild(service.child)
  }
}

const main = async () => {
  const rows: Array<Array<string>> = []
  if (DBS.includes("pglite")) rows.push(...(await measure("pglite", undefined)))
  const pg = process.env["DATABASE_URL"]
  if (DBS.includes("postgresql") && pg !== undefined && pg !== "") {
    console.log(`PostgreSQL: ${redactUrl(pg)}`)
    rows.push(...(await measure("postgresql", await freshSchema(pg, "mcp"))))
  }
  console.log(
    table(["db", "pair", "round", "REST ms (p50)", "MCP ms (p50)", "latency x", "REST CPU ms/req", "MCP CPU ms/req", "CPU x"], rows, 2)
  )
}

main()
  .catch((error: unknown) => {
    console.error(`bench:mcp failed: ${describe(error)}`)
    process.exitCode = 1
  })
  .finally(cleanupAll)
