/**
 * Backup benchmark: a lab of BENCH_BACKUP_MIB (default 200) files of about 1 MiB each is backed up, downloaded and
 * restored, one phase at a time, while another tenant (another lab) reads its tasks in a loop. For each phase it
 * prints the service process's peak memory (VmHWM) above its memory just before the phase (VmRSS), the phase's
 * duration, and the other tenant's p50/p99 beside a quiet baseline measured in the same run, just before.
 * Targets (issue 21): peak under 150 MiB above idle in every phase, the other tenant's p99 at most 3× the quiet one
 * during the backup and the restore. The restore's phase ends when the restore has; the search indexer then goes on
 * indexing the restored files in the background (in pieces: src/search/SearchPieces.ts).
 *
 *   npm run bench:backup                      embedded PGlite, then PostgreSQL when DATABASE_URL is set
 *
 * The service runs as `npm start` runs it (scripts/bench/Service.ts), in a fresh data directory (PGlite) or a
 * fresh schema (PostgreSQL). Knobs: BENCH_BACKUP_MIB, BENCH_QUIET_SECONDS (the baseline's length, 5),
 * BENCH_DBS (pglite,postgresql).
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { fmt, percentile, prng, table } from "./bench/Report.js"
import { memoryOf, resetHwm, type Service, serviceRunner } from "./bench/Service.js"
import { describe, makeHousekeeping, redactUrl, sleep } from "./bench/Util.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const MIB = Number.parseInt(process.env["BENCH_BACKUP_MIB"] ?? "200", 10)
const QUIET_SECONDS = Number(process.env["BENCH_QUIET_SECONDS"] ?? "5")
const DBS = (process.env["BENCH_DBS"] ?? "pglite,postgresql").split(",")
const FILE_BYTES = 1_040_000
const MEMORY_TARGET_MIB = 150
const LATENCY_TARGET = 3

const housekeeping = makeHousekeeping("the service")
const { tempDirs, cleanupAll, stopChild } = housekeeping
const { startService, freshSchema } = serviceRunner(housekeeping, { root: ROOT })

const Data = <A, I>(data: Schema.Schema<A, I>) => Schema.Struct({ data })
const WithId = Data(Schema.Struct({ id: Schema.String }))
const BackupBody = Data(
  Schema.Struct({
    id: Schema.String,
    status: Schema.String,
    size: Schema.NullOr(Schema.Number),
    error: Schema.NullOr(Schema.String),
    restore: Schema.NullOr(Schema.Struct({ status: Schema.String, error: Schema.NullOr(Schema.String) }))
  })
)

const call = async <A, I>(service: Service, token: string, method: string, path: string, schema: Schema.Schema<A, I>, json?: unknown) => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(600_000)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
  return Schema.decodeUnknownSync(Schema.parseJson(schema))(text)
}

/** Text that compresses about as source and notes do (3-4×), the same every run. */
const WORDS = Array.from({ length: 4096 }, (_, i) => `w${(i * 2654435761) % 100_000}`)
const contentOf = (seed: number) => {
  const random = prng(seed)
  const parts: Array<string> = []
  let length = 0
  while (length < FILE_BYTES) {
    const word = WORDS[Math.floor(random() * WORDS.length)] ?? "w"
    parts.push(word)
    length += word.length + 1
  }
  return parts.join(" ").slice(0, FILE_BYTES)
}

/** The other tenant: GET /tasks of its own lab, one request after another, until `until` resolves; latencies in ms. */
const otherTenant = async (service: Service, token: string, labId: string, until: Promise<unknown>) => {
  let done = false
  void until.finally(() => (done = true))
  const latencies: Array<number> = []
  while (!done) {
    const started = performance.now()
    await call(service, token, "GET", `/api/v1/tasks?labId=${labId}&limit=20`, Schema.Unknown)
    latencies.push(performance.now() - started)
    await sleep(20)
  }
  return latencies.sort((a, b) => a - b)
}

interface Phase {
  readonly name: string
  readonly seconds: number
  readonly idleMib: number
  readonly peakMib: number
  readonly p50: number
  readonly p99: number
  readonly quietP50: number
  readonly quietP99: number
  readonly requests: number
}

const poll = async (service: Service, token: string, path: string, done: (b: typeof BackupBody.Type["data"]) => boolean) => {
  for (;;) {
    const b = (await call(service, token, "GET", path, BackupBody)).data
    if (done(b)) return b
    await sleep(250)
  }
}

const benchDatabase = async (workDir: string, label: string, databaseUrl: string | undefined) => {
  const adminKey = `bench_admin_${randomBytes(18).toString("hex")}`
  const dataDir = mkdtempSync(join(workDir, `data-${label}-`))
  const dbUrl = databaseUrl ? await freshSchema(databaseUrl, label) : undefined
  const service = await startService(dataDir, adminKey, dbUrl, label, join(workDir, `${label}.log`), {
    QUOTA_STORED_BYTES: "100GiB,100GiB,100GiB"
  })
  const startMib = memoryOf(service.pid).rss
  const big = (await call(service, adminKey, "POST", "/api/v1/labs", WithId, { slug: `big-${label}`, name: "big", plan: "free" })).data.id
  const other = (await call(service, adminKey, "POST", "/api/v1/labs", WithId, { slug: `other-${label}`, name: "other", plan: "free" })).data.id
  for (let i = 0; i < 20; i++) await call(service, adminKey, "POST", "/api/v1/tasks", Schema.Unknown, { labId: other, title: `task ${i}` })
  const loadStarted = performance.now()
  for (let i = 0; i < MIB; i++) {
    await call(service, adminKey, "POST", "/api/v1/files", Schema.Unknown, { labId: big, path: `/data/file-${i}.txt`, content: contentOf(i) })
  }
  process.stdout.write(`${label}: ${MIB} files written in ${fmt((performance.now() - loadStarted) / 1000, 1)} s\n`)

  const phase = async (name: string, work: () => Promise<unknown>): Promise<Phase> => {
    const quiet = await otherTenant(service, adminKey, other, sleep(QUIET_SECONDS * 1000))
    const idleMib = memoryOf(service.pid).rss
    resetHwm(service.pid)
    const started = performance.now()
    const running = work()
    const busy = await otherTenant(service, adminKey, other, running)
    await running
    const seconds = (performance.now() - started) / 1000
    const peakMib = memoryOf(service.pid).hwm
    const result: Phase = {
      name,
      seconds,
      idleMib,
      peakMib,
      p50: percentile(busy, 50),
      p99: percentile(busy, 99),
      quietP50: percentile(quiet, 50),
      quietP99: percentile(quiet, 99),
      requests: busy.length
    }
    process.stdout.write(
      `${label} ${name}: ${fmt(seconds, 1)} s, memory ${fmt(idleMib)} → ${fmt(peakMib)} MiB, other tenant p99 ${fmt(result.p99, 1)} ms (quiet ${fmt(result.quietP99, 1)} ms)\n`
    )
    return result
  }

  let backupId = ""
  const backup = await phase("backup", async () => {
    backupId = (await call(service, adminKey, "POST", "/api/v1/backups", WithId, { labId: big })).data.id
    const b = await poll(service, adminKey, `/api/v1/backups/${backupId}?labId=${big}`, (b) => b.status === "completed" || b.status === "failed")
    if (b.status !== "completed") throw new Error(`the backup failed: ${b.error}`)
  })
  const download = await phase("download", async () => {
    const response = await fetch(`${service.baseUrl}/api/v1/backups/${backupId}/download?labId=${big}`, {
      headers: { authorization: `Bearer ${adminKey}` }
    })
    if (!response.ok || response.body === null) throw new Error(`download: ${response.status}`)
    let bytes = 0
    for await (const chunk of response.body) bytes += chunk.byteLength
    if (bytes === 0) throw new Error("download: no bytes")
  })
  const restore = await phase("restore", async () => {
    await call(service, adminKey, "POST", `/api/v1/backups/${backupId}/restore`, Schema.Unknown, { labId: big })
    const b = await poll(service, adminKey, `/api/v1/backups/${backupId}?labId=${big}`, (b) =>
      b.restore?.status === "completed" || b.restore?.status === "failed"
    )
    if (b.restore?.status !== "completed") throw new Error(`the restore failed: ${b.restore?.error}`)
  })
  await stopChild(service.child)
  return { label, startMib, phases: [backup, download, restore] }
}

const main = async () => {
  const workDir = mkdtempSync(join(tmpdir(), "bench-backup-"))
  tempDirs.add(workDir)
  const databaseUrl = process.env["DATABASE_URL"] || undefined
  console.log(
    `Backup bench: a lab of ${MIB} files of ${FILE_BYTES} bytes; embedded PGlite${databaseUrl ? ` and PostgreSQL at ${redactUrl(databaseUrl)}` : " (set DATABASE_URL for PostgreSQL too)"}.`
  )
  const results: Array<Awaited<ReturnType<typeof benchDatabase>>> = []
  let pass = true
  try {
    if (DBS.includes("pglite")) results.push(await benchDatabase(workDir, "pglite", undefined))
    if (databaseUrl && DBS.includes("postgresql")) results.push(await benchDatabase(workDir, "postgresql", databaseUrl))
  } catch (error) {
    pass = false
    console.log(`FAILED: ${describe(error)}`)
  } finally {
    await cleanupAll()
  }
  const rows = results.flatMap((r) =>
    r.phases.map((p) => {
      const growth = p.peakMib - p.idleMib
      const ratio = p.p99 / p.quietP99
      // the latency target is for the phases that work the database in steps (a download reads a chunk per request)
      const ok = growth < MEMORY_TARGET_MIB && (p.name === "download" || ratio <= LATENCY_TARGET)
      if (!ok) pass = false
      return [
        r.label,
        p.name,
        fmt(p.seconds, 1),
        fmt(p.idleMib),
        fmt(p.peakMib),
        fmt(growth),
        `${fmt(p.quietP50, 1)} / ${fmt(p.quietP99, 1)}`,
        `${fmt(p.p50, 1)} / ${fmt(p.p99, 1)}`,
        `${fmt(ratio, 1)}×`,
        String(p.requests)
      ]
    })
  )
  console.log(
    `\n${table(
      ["database", "phase", "s", "RSS before MiB", "peak MiB", "growth MiB", "other tenant quiet p50 / p99 ms", "during p50 / p99 ms", "p99 ratio", "requests"],
      rows,
      2
    )}`
  )
  console.log(
    `\ntargets: growth < ${MEMORY_TARGET_MIB} MiB in every phase, other tenant's p99 ≤ ${LATENCY_TARGET}× quiet during the backup and the restore: ${pass ? "met" : "NOT met"}`
  )
  process.exitCode = pass ? 0 : 1
}

void main()
