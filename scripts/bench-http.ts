/**
 * HTTP benchmark: authenticated GET /api/v1/tasks?labId=<lab>&limit=20 on the
 * service against a bare node:http server (scripts/bench/bare-server.ts) that
 * runs the same SQL through the same driver, on PGlite and on PostgreSQL, at 1
 * and 50 connections, with autocannon as the load generator in this process
 * and each server in a child process.
 *
 *   npm run bench:http
 *
 * Besides req/s and p50/p99 it reports the server processes' CPU time per
 * request (from /proc), steadier than throughput on a shared machine.
 *
 * PostgreSQL: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test; the run
 * uses a fresh schema of its own (dropped at the end) and is skipped when the
 * server is unreachable. Knobs: BENCH_SECONDS (measured seconds per point, 8),
 * BENCH_WARMUP_SECONDS (3), BENCH_CPU_PROF=<dir> (run the service under
 * node --cpu-prof, profiles written under it in service-<db>/ when it stops, and the reference's in
 * reference-<db>/), BENCH_DBS and
 * BENCH_SERVERS (comma lists to run only some points, e.g. BENCH_DBS=postgresql
 * BENCH_SERVERS=service while iterating; the verdicts need both servers; the
 * bare server still starts, to check that its first page is the service's).
 * BENCH_REFERENCE_ROOT=<checkout> runs another checkout (installed; `npm start` builds it) beside the service, on its
 * own data directory or schema, the two measured in turn BENCH_REFERENCE_PAIRS times (3) at each point, and prints
 * their CPU per request pair by pair.
 */
import autocannon from "autocannon"
import { Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, mkdirSync, mkdtempSync, openSync } from "node:fs"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import {
  baseEnv,
  createSchema,
  describe,
  freePort,
  killGroup,
  makeHousekeeping,
  redactUrl,
  startCommand,
  waitForStatus
} from "./bench/Util.js"
import { treeCpuMs } from "./bench/Cpu.js"
import { median, percentile, table } from "./bench/Report.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const START = startCommand(ROOT)
const DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/test"

const envSeconds = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number of seconds`)
  return n
}

const MEASURE_SECONDS = envSeconds("BENCH_SECONDS", 8)
const WARMUP_SECONDS = envSeconds("BENCH_WARMUP_SECONDS", 3)
const CPU_PROF_DIR = process.env["BENCH_CPU_PROF"] ? resolve(process.env["BENCH_CPU_PROF"]) : undefined
const CONNECTIONS = [1, 50] as const

const envList = <A extends string>(name: string, all: ReadonlyArray<A>): ReadonlyArray<A> => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return all
  const picked = all.filter((value) => raw.split(",").map((s) => s.trim()).includes(value))
  if (picked.length === 0) throw new Error(`${name} must list some of ${all.join(", ")}`)
  return picked
}
const TASK_COUNT = 200
const PAGE_SIZE = 20
const TARGET_RATIO = 0.5
const TARGET_P99_MS = 25
/** Admin limits far above anything a run can reach, so the limiter never says no. */
const HUGE_LIMIT = "1000000000"

// ---------------------------------------------------------------------------
// wire shapes, decoded with Schema

const Meta = Schema.Struct({ request_id: Schema.String, timestamp: Schema.String })
const StatusBody = Schema.Struct({ data: Schema.Struct({ status: Schema.Literal("ok") }), meta: Meta })
const LabBody = Schema.Struct({ data: Schema.Struct({ id: Schema.String, slug: Schema.String }), meta: Meta })
const TaskWire = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  title: Schema.String,
  description: Schema.String,
  status: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
const TaskBody = Schema.Struct({ data: TaskWire, meta: Meta })
const ListBody = Schema.Struct({
  data: Schema.Array(TaskWire),
  meta: Schema.Struct({ ...Meta.fields, next_cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean })
})
type ListBody = typeof ListBody.Type

const Histogram = Schema.Struct({ average: Schema.Number, p50: Schema.Number, p99: Schema.Number })
const AutocannonResult = Schema.Struct({
  duration: Schema.Number,
  errors: Schema.Number,
  timeouts: Schema.Number,
  non2xx: Schema.Number,
  requests: Schema.Struct({ average: Schema.Number, total: Schema.Number }),
  latency: Histogram
})
type AutocannonResult = typeof AutocannonResult.Type

// ---------------------------------------------------------------------------
// cleanup: children, temp dirs and the PostgreSQL schema go away on every exit path

const { children, tempDirs, cleanups, stopChild, cleanupAll } = makeHousekeeping("the servers")

// ---------------------------------------------------------------------------
// helpers

interface Server {
  readonly name: string
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly logPath: string
  readonly exited: Promise<void>
}

/**
 * `node <npm start's flags> [extra flags] <entry>`: the service as deployed (npm start's entry), the bare server
 * alike (through tsx),
 * listening on 127.0.0.1:`port` with `settings` on top of the parent's neutral environment.
 */
const spawnServer = (
  name: string,
  args: ReadonlyArray<string>,
  settings: NodeJS.ProcessEnv,
  port: number,
  logPath: string,
  root: string = ROOT
): Server => {
  const log = openSync(logPath, "a")
  const child = spawn(process.execPath, [...startCommand(root).flags, ...args], {
    cwd: root,
    env: { ...baseEnv(), PORT: String(port), HOST: "127.0.0.1", ...settings },
    stdio: ["ignore", log, log],
    detached: true
  })
  closeSync(log)
  children.add(child)
  const exited = new Promise<void>((done) => {
    child.once("exit", () => {
      children.delete(child)
      done()
    })
  })
  return { name, child, baseUrl: `http://127.0.0.1:${port}`, logPath, exited }
}

const stopServer = async (server: Server) => {
  await stopChild(server.child)
  // anything the server started goes with its group (ESRCH, ignored, when the group is gone)
  killGroup(server.child, "SIGKILL", true)
}

const waitReady = (server: Server) => waitForStatus(server, server.name, StatusBody, 200)

const request = async <A, I>(
  schema: Schema.Schema<A, I>,
  url: string,
  token: string,
  init: { readonly method?: string; readonly json?: unknown; readonly expect: number }
): Promise<A> => {
  const response = await fetch(url, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.json !== undefined ? { "content-type": "application/json" } : {})
    },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  if (response.status !== init.expect) {
    throw new Error(`${init.method ?? "GET"} ${url}: expected ${init.expect}, got ${response.status}: ${text.slice(0, 500)}`)
  }
  return Schema.decodeUnknownSync(Schema.parseJson(schema))(text)
}

const listPath = (labId: string) => `/api/v1/tasks?labId=${encodeURIComponent(labId)}&limit=${PAGE_SIZE}`

/** A lab and TASK_COUNT tasks, through the API. Returns the lab id. */
const seed = async (server: Server, token: string): Promise<string> => {
  const lab = await request(LabBody, `${server.baseUrl}/api/v1/labs`, token, {
    method: "POST",
    json: { slug: `bench-${randomBytes(4).toString("hex")}`, name: "HTTP bench", plan: "team" },
    expect: 201
  })
  let next = 0
  const worker = async () => {
    while (next < TASK_COUNT) {
      const i = next++
      await request(TaskBody, `${server.baseUrl}/api/v1/tasks`, token, {
        method: "POST",
        json: { labId: lab.data.id, title: `bench task ${i}` },
        expect: 201
      })
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return lab.data.id
}

const firstPage = (server: Server, token: string, labId: string) =>
  request(ListBody, `${server.baseUrl}${listPath(labId)}`, token, { expect: 200 })

/** The bare server must answer with what the service answers, or the comparison means nothing. */
const checkSamePage = (service: ListBody, bare: ListBody) => {
  const problems: Array<string> = []
  if (service.data.length !== PAGE_SIZE) problems.push(`the service returned ${service.data.length} tasks, not ${PAGE_SIZE}`)
  if (JSON.stringify(service.data) !== JSON.stringify(bare.data)) problems.push("the data arrays differ")
  if (service.meta.next_cursor !== bare.meta.next_cursor) problems.push("next_cursor differs")
  if (service.meta.has_more !== bare.meta.has_more) problems.push("has_more differs")
  if (problems.length > 0) throw new Error(`the bare server's page is not the service's: ${problems.join("; ")}`)
}

// ---------------------------------------------------------------------------
// load

interface Measurement {
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly failures: number
  /** CPU the server's processes used per request (Linux /proc), NaN where unknown. */
  readonly cpuMsPerRequest: number
  /** That CPU as a share of one core over the measurement. */
  readonly cpuPercent: number
  /** The machine's 1-minute load average when the measurement started. */
  readonly load: number
}

/**
 * One autocannon run. Latencies come from its per-response event (float ms)
 * rather than its histogram, which keeps whole milliseconds only.
 */
const load = (url: string, token: string, connections: number, seconds: number) =>
  new Promise<{ readonly result: AutocannonResult; readonly latencies: Float64Array }>((done, fail) => {
    let latencies = new Float64Array(1 << 16)
    let count = 0
    const instance = autocannon(
      { url, connections, duration: seconds, headers: { authorization: `Bearer ${token}` }, timeout: 10 },
      (error, raw) => {
        if (error) return fail(error instanceof Error ? error : new Error(String(error)))
        try {
          done({ result: Schema.decodeUnknownSync(AutocannonResult)(raw), latencies: latencies.slice(0, count).sort() })
        } catch (decodeError) {
          fail(decodeError instanceof Error ? decodeError : new Error(String(decodeError)))
        }
      }
    )
    instance.on("response", (...args) => {
      const status = args[1]
      const ms = args[3]
      if (typeof status !== "number" || typeof ms !== "number" || status < 200 || status > 299) return
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2)
        grown.set(latencies)
        latencies = grown
      }
      latencies[count++] = ms
    })
  })

const measure = async (server: Server, token: string, labId: string, connections: number): Promise<Measurement> => {
  const url = `${server.baseUrl}${listPath(labId)}`
  await load(url, token, connections, WARMUP_SECONDS)
  const pid = server.child.pid ?? -1
  const load1 = loadavg()[0] ?? Number.NaN
  const cpuBefore = treeCpuMs(pid)
  const { result, latencies } = await load(url, token, connections, MEASURE_SECONDS)
  const cpu = treeCpuMs(pid) - cpuBefore
  return {
    reqPerSec: result.requests.total / result.duration,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
    cpuMsPerRequest: cpu / result.requests.total,
    cpuPercent: (100 * cpu) / (result.duration * 1000),
    load: load1
  }
}

// ---------------------------------------------------------------------------
// one database: the service, then the bare server on the same data

type Db = "pglite" | "postgresql"
type ServerKind = "service" | "bare" | "reference"

const DBS = envList<Db>("BENCH_DBS", ["pglite", "postgresql"])
/** A checkout to measure beside this one (its own build and node_modules), and how many turns each takes per point. */
const REFERENCE_ROOT = process.env["BENCH_REFERENCE_ROOT"] ? resolve(process.env["BENCH_REFERENCE_ROOT"]) : undefined
const REFERENCE_PAIRS = Number(process.env["BENCH_REFERENCE_PAIRS"] ?? "3")
const SERVERS = envList<ServerKind>("BENCH_SERVERS", ["service", "bare"])

interface Row {
  readonly db: Db
  readonly server: ServerKind
  readonly connections: number
  readonly m: Measurement
}

const benchDatabase = async (
  db: Db,
  workDir: string,
  adminKey: string,
  databaseUrl: string | undefined,
  referenceUrl: string | undefined
): Promise<ReadonlyArray<Row>> => {
  const rows: Array<Row> = []
  const dataDir = join(workDir, db)
  mkdirSync(dataDir, { recursive: true })

  const servicePort = await freePort()
  const serviceEnv: NodeJS.ProcessEnv = {
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_ADMIN_PER_MINUTE: HUGE_LIMIT,
    RATE_LIMIT_ADMIN_PER_DAY: HUGE_LIMIT,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {})
  }
  // one folder per database, node's default names (a profile per thread: the main one and tsx's loader);
  // the service's is the larger
  const profileDir = CPU_PROF_DIR ? join(CPU_PROF_DIR, `service-${db}`) : undefined
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const profileArgs = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []
  const service = spawnServer("service", [...profileArgs, ...START.entry], serviceEnv, servicePort, join(workDir, `service-${db}.log`))
  let started = Date.now()
  await waitReady(service)
  const serviceStart = (Date.now() - started) / 1000
  started = Date.now()
  const labId = await seed(service, adminKey)
  const servicePage = await firstPage(service, adminKey, labId)
  console.log(
    `[${db}] service ready in ${serviceStart.toFixed(1)} s; seeded 1 lab + ${TASK_COUNT} tasks through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`
  )
  const reference = REFERENCE_ROOT === undefined ? undefined : await startReference(REFERENCE_ROOT, db, workDir, adminKey, referenceUrl)
  for (const connections of SERVERS.includes("service") ? CONNECTIONS : []) {
    // with a reference, the two are measured in turn, REFERENCE_PAIRS times: a pair meets the same machine
    for (let pair = 0; pair < (reference === undefined ? 1 : REFERENCE_PAIRS); pair++) {
      const m = await measure(service, adminKey, labId, connections)
      rows.push({ db, server: "service", connections, m })
      console.log(`[${db}] service  ${String(connections).padStart(2)} conns: ${fmtRow(m)}`)
      if (reference === undefined) continue
      const r = await measure(reference.server, adminKey, reference.labId, connections)
      rows.push({ db, server: "reference", connections, m: r })
      console.log(`[${db}] reference ${String(connections).padStart(2)} conns: ${fmtRow(r)}`)
    }
  }
  await stopServer(service)
  if (reference !== undefined) await stopServer(reference.server)

  // PGlite's data dir opens in one process at a time: the bare server starts once the service is gone
  const barePort = await freePort()
  const bareEnv: NodeJS.ProcessEnv = {
    BENCH_TOKEN: adminKey,
    ...(databaseUrl ? { BARE_DATABASE_URL: databaseUrl } : { BARE_PGLITE_DIR: join(dataDir, "pglite") })
  }
  const bare = spawnServer("bare server", ["--import", "tsx", "scripts/bench/bare-server.ts"], bareEnv, barePort, join(workDir, `bare-${db}.log`))
  await waitReady(bare)
  checkSamePage(servicePage, await firstPage(bare, adminKey, labId))
  console.log(`[${db}] bare server ready; its first page is the service's (same tasks, cursor and has_more)`)
  for (const connections of SERVERS.includes("bare") ? CONNECTIONS : []) {
    const m = await measure(bare, adminKey, labId, connections)
    rows.push({ db, server: "bare", connections, m })
    console.log(`[${db}] bare     ${String(connections).padStart(2)} conns: ${fmtRow(m)}`)
  }
  await stopServer(bare)
  return rows
}

/** Another checkout (BENCH_REFERENCE_ROOT, built and installed), on its own data directory or schema, seeded alike. */
const startReference = async (root: string, db: Db, workDir: string, adminKey: string, databaseUrl: string | undefined) => {
  const dataDir = join(workDir, `${db}-reference`)
  mkdirSync(dataDir, { recursive: true })
  const env: NodeJS.ProcessEnv = {
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_ADMIN_PER_MINUTE: HUGE_LIMIT,
    RATE_LIMIT_ADMIN_PER_DAY: HUGE_LIMIT,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {})
  }
  // profiled like the service when BENCH_CPU_PROF is set, in reference-<db>/, so the two profiles can be compared
  const profileDir = CPU_PROF_DIR ? join(CPU_PROF_DIR, `reference-${db}`) : undefined
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const profileArgs = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []
  const entry = [...profileArgs, ...startCommand(root).entry]
  const server = spawnServer("reference", entry, env, await freePort(), join(workDir, `reference-${db}.log`), root)
  await waitReady(server)
  const labId = await seed(server, adminKey)
  console.log(`[${db}] reference (${root}) ready and seeded`)
  return { server, labId }
}

// ---------------------------------------------------------------------------
// PostgreSQL: a fresh schema, or nothing when the server is unreachable

const preparePostgres = async (baseUrl: string): Promise<string | undefined> => {
  const created = await createSchema(baseUrl, "bench_http").catch((error: unknown) => {
    console.log(`PostgreSQL at ${redactUrl(baseUrl)} is unreachable (${describe(error)}): PGlite only.`)
    return undefined
  })
  if (created === undefined) return undefined
  cleanups.push(created.drop)
  console.log(`PostgreSQL at ${redactUrl(baseUrl)}: bench schema ${created.schema} (dropped at the end)`)
  return created.url
}

// ---------------------------------------------------------------------------
// report

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const fmtRow = (m: Measurement) =>
  `${fmt(m.reqPerSec, 0)} req/s, p50 ${fmt(m.p50, 2)} ms, p99 ${fmt(m.p99, 2)} ms, server CPU ${fmt(m.cpuMsPerRequest, 2)} ms/req` +
  ` at ${fmt(m.cpuPercent, 0)}% of a core (${m.requests} requests${m.failures > 0 ? `, ${m.failures} FAILED` : ""}; load ${fmt(m.load, 1)})`


const report = (rows: ReadonlyArray<Row>) => {
  console.log("\nResults (GET /api/v1/tasks?labId=<lab>&limit=20, admin key, first page of 200 tasks)\n")
  console.log(
    table(
      ["db", "server", "conns", "req/s", "p50 ms", "p99 ms", "CPU ms/req", "CPU %", "requests", "failed", "load"],
      rows.map((r) => [
        r.db,
        r.server,
        String(r.connections),
        fmt(r.m.reqPerSec, 0),
        fmt(r.m.p50, 2),
        fmt(r.m.p99, 2),
        fmt(r.m.cpuMsPerRequest, 2),
        fmt(r.m.cpuPercent, 0),
        String(r.m.requests),
        String(r.m.failures),
        fmt(r.m.load, 1)
      ]),
      2
    )
  )

  const find = (db: Db, server: ServerKind, connections: number) =>
    rows.find((r) => r.db === db && r.server === server && r.connections === connections)
  const dbs = [...new Set(rows.map((r) => r.db))]

  const ratioRows: Array<Array<string>> = []
  const verdicts: Array<string> = []
  let allPass = true
  for (const db of dbs) {
    for (const connections of CONNECTIONS) {
      const service = find(db, "service", connections)
      const bare = find(db, "bare", connections)
      if (!service || !bare) continue
      ratioRows.push([
        db,
        String(connections),
        fmt(service.m.reqPerSec / bare.m.reqPerSec, 2),
        fmt(service.m.p50 / bare.m.p50, 2),
        fmt(service.m.p99 / bare.m.p99, 2),
        fmt(service.m.cpuMsPerRequest / bare.m.cpuMsPerRequest, 2)
      ])
      if (connections === 50) {
        const ratio = service.m.reqPerSec / bare.m.reqPerSec
        const ratioOk = ratio >= TARGET_RATIO && service.m.failures === 0
        const p99Ok = service.m.p99 < TARGET_P99_MS && service.m.failures === 0
        allPass &&= ratioOk && p99Ok
        verdicts.push(
          `${ratioOk ? "PASS" : "FAIL"}  ${db}: service throughput at 50 conns is ${fmt(ratio * 100, 0)}% of bare (target >= ${TARGET_RATIO * 100}%)`,
          `${p99Ok ? "PASS" : "FAIL"}  ${db}: service p99 at 50 conns is ${fmt(service.m.p99, 2)} ms (target < ${TARGET_P99_MS} ms;` +
            ` the bare server's is ${fmt(bare.m.p99, 2)} ms)`
        )
      }
    }
  }
  if (rows.some((r) => r.server === "reference")) {
    const pairs: Array<Array<string>> = []
    for (const db of dbs) {
      for (const connections of CONNECTIONS) {
        const ours = rows.filter((r) => r.db === db && r.connections === connections && r.server === "service")
        const theirs = rows.filter((r) => r.db === db && r.connections === connections && r.server === "reference")
        const ratios = theirs.map((t, i) => (ours[i]?.m.cpuMsPerRequest ?? Number.NaN) / t.m.cpuMsPerRequest)
        pairs.push([db, String(connections), ratios.map((x) => fmt(x, 2)).join(", "), fmt(median(ratios), 2)])
      }
    }
    console.log(`\nService / reference (${REFERENCE_ROOT}), CPU per request, pair by pair\n`)
    console.log(table(["db", "conns", "pairs", "median"], pairs, 1))
  }
  console.log("\nService / bare (throughput: higher is better; latency: lower is better)\n")
  console.log(table(["db", "conns", "req/s ratio", "p50 ratio", "p99 ratio", "CPU/req ratio"], ratioRows, 1))
  console.log("\nTargets\n")
  for (const v of verdicts) console.log(v)
  console.log(
    `\nWith 50 connections each waiting for its answer, mean latency = 50 / throughput (Little's law): a p99 under` +
      ` ${TARGET_P99_MS} ms needs well over ${Math.round(50 / (TARGET_P99_MS / 1000))} req/s, whatever the server.`
  )
  console.log(
    `\nNotes: ${MEASURE_SECONDS} s measured after ${WARMUP_SECONDS} s warm-up per point; autocannon runs in this process on the same` +
      ` machine (${availableParallelism()} CPUs) as the server it loads, and other work on the machine` +
      " (tests run by others) makes figures noisy: compare ratios from the same run, and rerun before drawing conclusions from small gaps." +
      " CPU ms/req is the server processes' own CPU time (/proc) over the measurement divided by the requests served: it counts" +
      " no other process's work, so its ratio is the steadiest figure here, though it too rises when the machine is oversubscribed" +
      " (load well above the CPU count)." +
      " Requests use the operator's admin key, with RATE_LIMIT_ADMIN_PER_MINUTE/PER_DAY set to 1e9 so the limiter counts but never refuses;" +
      " latencies are per-response times (float ms) from autocannon's response events."
  )
  return allPass
}

// ---------------------------------------------------------------------------

const main = async () => {
  const workDir = mkdtempSync(join(tmpdir(), "bench-http-"))
  tempDirs.add(workDir)
  const adminKey = `bench_admin_${randomBytes(18).toString("hex")}`
  const started = Date.now()
  console.log(
    `HTTP bench: service (npm start: node ${[...START.flags, ...START.entry].join(" ")}) vs bare node:http` +
      ` (scripts/bench/bare-server.ts, same node flags), ${CONNECTIONS.join(" and ")} connections,` +
      ` ${WARMUP_SECONDS} s warm-up + ${MEASURE_SECONDS} s per point.` +
      ` Authenticated with the admin key; admin rate limits set to ${HUGE_LIMIT}/minute and /day so they never bind.`
  )
  if (CPU_PROF_DIR) console.log(`CPU profiles of the service go to ${CPU_PROF_DIR}`)

  const rows: Array<Row> = []
  try {
    if (DBS.includes("pglite")) rows.push(...(await benchDatabase("pglite", workDir, adminKey, undefined, undefined)))
    const pgBase = process.env["DATABASE_URL"] || DEFAULT_PG_URL
    const pgUrl = DBS.includes("postgresql") ? await preparePostgres(pgBase) : undefined
    const referenceUrl = pgUrl && REFERENCE_ROOT !== undefined ? await preparePostgres(pgBase) : undefined
    if (pgUrl) rows.push(...(await benchDatabase("postgresql", workDir, adminKey, pgUrl, referenceUrl)))
  } finally {
    await cleanupAll()
  }
  const pass = report(rows)
  console.log(`\n${pass ? "All targets met" : "Some targets missed"}; run took ${((Date.now() - started) / 1000).toFixed(0)} s.`)
}

main().then(
  // autocannon's agents keep sockets alive: end the run explicitly
  () => process.exit(0),
  async (error: unknown) => {
    process.stderr.write(`bench-http failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    await cleanupAll()
    process.exit(1)
  }
)
