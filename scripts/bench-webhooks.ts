/**
 * Webhook acknowledgement under load (issue 11, item 8): bursts of 50 signed
 * GitHub push deliveries sent at once, one burst every 200 ms (or as soon as the
 * last is answered), while the labs' pulls run against a real
 * git host (git http-backend on loopback, test/support/GitServer.ts), outside
 * commits of many files landing all along so every pull has work. Prints the
 * time from sending a delivery to its answer (p50, p90, p99, max).
 *
 *   npm run bench:webhooks
 *
 * The same storm runs against this checkout and against a reference checkout
 * (BENCH_REFERENCE_ROOT, default ../main: the code before the change), one after
 * the other in the same run, each as `npm start` runs it (a child process), on
 * embedded PGlite and, with DATABASE_URL, on PostgreSQL (a fresh schema each).
 * Knobs: BENCH_STORM_MS (10000), BENCH_CONCURRENCY (50), BENCH_BURST_EVERY_MS (200), BENCH_LABS (2),
 * BENCH_FILES (3000 per repository), BENCH_CHANGED (300 files per outside commit), BENCH_ROUNDS (1),
 * BENCH_CPU_PROF=<dir> (each service under node --cpu-prof). The first 2 s of bursts warm the service up, uncounted.
 */
import { Schema } from "effect"
import { spawn } from "node:child_process"
import { createHmac, randomBytes } from "node:crypto"
import { existsSync, mkdtempSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type GitServer, startGitServer } from "../test/support/GitServer.js"
import { serviceRunner } from "./bench/Service.js"
import { makeHousekeeping, sleep } from "./bench/Util.js"
import { percentile } from "./bench/Report.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
/** Another checkout to measure beside this one in the same run (the code before a change), when set. */
const REFERENCE_ROOT = process.env["BENCH_REFERENCE_ROOT"] ? resolve(process.env["BENCH_REFERENCE_ROOT"]) : undefined
const int = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`)
  return n
}
const STORM_MS = int("BENCH_STORM_MS", 10_000)
const CONCURRENCY = int("BENCH_CONCURRENCY", 50)
const LABS = int("BENCH_LABS", 2)
const FILES = int("BENCH_FILES", 3_000)
const CHANGED = int("BENCH_CHANGED", 300)
const ROUNDS = int("BENCH_ROUNDS", 1)
const BURST_EVERY_MS = int("BENCH_BURST_EVERY_MS", 200)
const WARM_UP_MS = 2_000
const CPU_PROF_DIR = process.env["BENCH_CPU_PROF"] ? resolve(process.env["BENCH_CPU_PROF"]) : undefined
const TARGET_P99_MS = 100

const housekeeping = makeHousekeeping("the services")
const { tempDirs, cleanups, stopChild, cleanupAll } = housekeeping
const runner = serviceRunner(housekeeping, { root: ROOT, cpuProfDir: CPU_PROF_DIR })

const Lab = Schema.Struct({ data: Schema.Struct({ id: Schema.String }) })
const Secret = Schema.Struct({ secret: Schema.String })
const Status = Schema.Struct({ lastSyncSha: Schema.NullOr(Schema.String) })
const Activity = Schema.Struct({ data: Schema.Array(Schema.Struct({ kind: Schema.String })) })
const Answer = Schema.Struct({ ok: Schema.Literal(true), action: Schema.String })

// ---------------------------------------------------------------------------
// repositories: files written with git fast-import straight into the served bare repository

const fastImport = (gitdir: string, stream: string) =>
  new Promise<void>((done, fail) => {
    const child = spawn("git", ["fast-import", "--quiet"], { cwd: gitdir, stdio: ["pipe", "ignore", "inherit"] })
    child.once("error", fail)
    child.once("close", (code) => (code === 0 ? done() : fail(new Error(`git fast-import exited ${code}`))))
    child.stdin.end(stream)
  })

const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`
let clock = 1_700_000_000
const pathOf = (i: number) => `area-${Math.floor(i / 1000)}/dir-${Math.floor(i / 100)}/file-${i}.md`
const contentOf = (i: number, revision: number) => `# ${pathOf(i)} revision ${revision}\n${`line ${i} ${revision} lorem ipsum\n`.repeat(50)}`

/** One commit on main writing `paths` at `revision` (the first commit has no parent). */
const commit = (gitdir: string, paths: ReadonlyArray<number>, revision: number, first: boolean) =>
  fastImport(
    gitdir,
    `commit refs/heads/main\ncommitter Outside <outside@example.com> ${clock++} +0000\n${data(`revision ${revision}`)}` +
      (first ? "" : "from refs/heads/main^0\n") +
      paths.map((i) => `M 100644 inline ${pathOf(i)}\n${data(contentOf(i, revision))}`).join("") +
      "\n"
  )

// ---------------------------------------------------------------------------
// the service, as npm start runs it (scripts/bench/Service.ts), with the admin key it was given

interface Service {
  readonly baseUrl: string
  readonly adminKey: string
  readonly stop: () => Promise<void>
}

const startService = async (root: string, databaseUrl: string | undefined, logPath: string): Promise<Service> => {
  const adminKey = `lsk_bench_${randomBytes(16).toString("hex")}`
  const dataDir = mkdtempSync(join(tmpdir(), "bench-webhooks-data-"))
  tempDirs.add(dataDir)
  const service = await runner.startService(dataDir, adminKey, databaseUrl, randomBytes(3).toString("hex"), logPath, {}, root)
  return { baseUrl: service.baseUrl, adminKey, stop: () => stopChild(service.child) }
}

const call = async <A, I>(service: Service, schema: Schema.Schema<A, I>, method: string, path: string, json?: unknown) => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.adminKey}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(300_000)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
  return Schema.decodeUnknownSync(Schema.parseJson(schema))(text)
}

// ---------------------------------------------------------------------------
// one storm


interface StormResult {
  readonly acks: ReadonlyArray<number>
  readonly failures: number
  readonly pulls: number
  readonly commits: number
  /** Each lab's first forced sync (all its files), before the storm: the pull's own speed. */
  readonly initialSyncMs: ReadonlyArray<number>
}

const storm = async (git: GitServer, root: string, databaseUrl: string | undefined, label: string): Promise<StormResult> => {
  const workDir = mkdtempSync(join(tmpdir(), "bench-webhooks-"))
  tempDirs.add(workDir)
  const service = await startService(root, databaseUrl ? await runner.freshSchema(databaseUrl, "webhooks") : undefined, join(workDir, "service.log"))
  try {
    const initialSyncMs: Array<number> = []
    const labs: Array<{ readonly name: string; readonly url: string; readonly gitdir: string; readonly labId: string; readonly secret: string }> = []
    for (let k = 0; k < LABS; k++) {
      const name = `hooks-${label}-${k}-${randomBytes(3).toString("hex")}`
      const url = await git.createRepo(name)
      const gitdir = join(git.root, `${name}.git`)
      await commit(gitdir, Array.from({ length: FILES }, (_, i) => i), 0, true)
      const labId = (await call(service, Lab, "POST", "/api/v1/labs", { slug: name, name, plan: "team" })).data.id
      await call(service, Status, "PATCH", "/api/v1/sync", { labId, repo: url, autoPushOnEdit: false })
      const syncStarted = performance.now()
      await call(service, Schema.Unknown, "POST", "/api/v1/sync", { labId })
      initialSyncMs.push(performance.now() - syncStarted)
      const { secret } = await call(service, Secret, "POST", "/api/v1/sync/secret", { labId })
      labs.push({ name, url, gitdir, labId, secret })
    }
    const pullsBefore = await Promise.all(labs.map((lab) => pullCount(service, lab.labId)))

    let stop = false
    let commits = 0
    // outside commits all along: each changes CHANGED files, so the pulls the deliveries ask for have work
    const pusher = async () => {
      for (let revision = 1; !stop; revision++) {
        for (const lab of labs) {
          const start = (revision * CHANGED) % FILES
          await commit(lab.gitdir, Array.from({ length: CHANGED }, (_, j) => (start + j) % FILES), revision, false)
          commits++
        }
        await sleep(200)
      }
    }
    const acks: Array<number> = []
    let failures = 0
    let bursts = 0
    // each sender has a loopback address of its own, as git hosts deliver from several (the webhook rate limit is per address)
    const agents = Array.from({ length: CONCURRENCY }, (_, n) => new Agent({ keepAlive: true, localAddress: `127.0.${1 + Math.floor(n / 250)}.${1 + (n % 250)}` }))
    const deliver = (n: number) => {
      const lab = labs[(n + bursts) % labs.length]
      if (lab === undefined) throw new Error("no lab")
      const body = JSON.stringify({ ref: "refs/heads/main", repository: { clone_url: lab.url, full_name: lab.name } })
      const headers = {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "x-github-event": "push",
        "x-github-delivery": `bench-${bursts}-${n}-${randomBytes(4).toString("hex")}`,
        "x-hub-signature-256": `sha256=${createHmac("sha256", lab.secret).update(body).digest("hex")}`
      }
      const started = performance.now()
      return new Promise<void>((done, fail) => {
        const req = request(`${service.baseUrl}/api/webhooks/github`, { method: "POST", headers, agent: agents[n] }, (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => (text += chunk))
          res.on("end", () => {
            acks.push(performance.now() - started)
            if (res.statusCode !== 202 || Schema.decodeUnknownSync(Schema.parseJson(Answer))(text).action !== "queued") {
              if (failures++ === 0) console.log(`a delivery was not queued: ${res.statusCode} ${text.slice(0, 300)}`)
            }
            done()
          })
        })
        req.once("error", fail)
        req.end(body)
      })
    }
    // bursts of CONCURRENCY deliveries at once, one every BURST_EVERY_MS (or as soon as the last is answered)
    const storming = async () => {
      while (!stop) {
        const next = sleep(BURST_EVERY_MS)
        await Promise.all(Array.from({ length: CONCURRENCY }, (_, n) => deliver(n)))
        bursts++
        await next
      }
    }
    const running = [pusher(), storming()]
    // the first bursts warm the service (JIT, caches): not counted
    await sleep(WARM_UP_MS)
    acks.length = 0
    failures = 0
    await sleep(STORM_MS)
    stop = true
    await Promise.all(running)
    for (const agent of agents) agent.destroy()
    const pullsAfter = await Promise.all(labs.map((lab) => pullCount(service, lab.labId)))
    const pulls = pullsAfter.reduce((sum, n, k) => sum + n - (pullsBefore[k] ?? 0), 0)
    return { acks, failures, pulls, commits, initialSyncMs }
  } finally {
    await service.stop()
  }
}

/** The lab's sync activity entries (one per pull that changed something). */
const pullCount = async (service: Service, labId: string) =>
  (await call(service, Activity, "GET", `/api/v1/activity?labId=${labId}&limit=100`)).data.filter((e) => e.kind === "sync").length

// ---------------------------------------------------------------------------

const main = async () => {
  if (REFERENCE_ROOT !== undefined && !existsSync(join(REFERENCE_ROOT, "src", "main.ts"))) throw new Error(`no reference checkout at ${REFERENCE_ROOT}`)
  const builds: ReadonlyArray<readonly [string, string]> = [...(REFERENCE_ROOT === undefined ? [] : [["reference", REFERENCE_ROOT] as const]), ["this change", ROOT]]
  const git = await startGitServer()
  cleanups.push(() => git.close())
  const databases = [
    { name: "PGlite", url: undefined },
    ...(process.env["DATABASE_URL"] ? [{ name: "PostgreSQL", url: process.env["DATABASE_URL"] }] : [])
  ]
  const rows: Array<string> = []
  let worst = 0
  for (const database of databases) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [which, root] of builds) {
        const result = await storm(git, root, database.url, `${database.name.toLowerCase()}-${round}`)
        const sorted = [...result.acks].sort((a, b) => a - b)
        const [p50, p90, p99] = [50, 90, 99].map((p) => percentile(sorted, p))
        if (which === "this change") worst = Math.max(worst, p99 ?? Number.NaN)
        const row =
          `${database.name.padEnd(10)} ${which.padEnd(11)} acks ${String(sorted.length).padStart(6)}  p50 ${p50?.toFixed(1).padStart(7)} ms` +
          `  p90 ${p90?.toFixed(1).padStart(7)} ms  p99 ${p99?.toFixed(1).padStart(7)} ms  max ${sorted.at(-1)?.toFixed(0).padStart(5)} ms` +
          `  not queued ${result.failures}  pulls ${result.pulls}  outside commits ${result.commits}` +
          `  first sync ${result.initialSyncMs.map((ms) => ms.toFixed(0)).join(", ")} ms`
        console.log(row)
        rows.push(row)
      }
    }
  }
  console.log(`\nbursts of ${CONCURRENCY} concurrent deliveries every ${BURST_EVERY_MS} ms for ${STORM_MS / 1000} s, ${LABS} labs of ${FILES} files, ${CHANGED} files per outside commit`)
  console.log(`reference: ${REFERENCE_ROOT ?? "none (set BENCH_REFERENCE_ROOT to a checkout of the code before a change)"}\n${rows.join("\n")}`)
  console.log(`${worst < TARGET_P99_MS ? "PASS" : "FAIL"} ack p99 ${worst.toFixed(1)} ms (target < ${TARGET_P99_MS} ms)`)
}

main()
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cleanupAll())
