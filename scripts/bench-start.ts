/**
 * Start-up and memory of the deployment (issue "A leaner process"): the service as `npm start` runs it (compiled,
 * dist/) beside the same checkout run through tsx (as `npm start` did before the build), in the same run.
 *
 *   npm run bench:start
 *   BENCH_LABS=1000 BENCH_REPEAT=3 npm run bench:start
 *
 * For each variant, BENCH_REPEAT (2) times, alternating: time from spawn to the first 200 of GET /readyz on
 * PostgreSQL (a fresh schema; DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test) and on a first and a
 * second start of PGlite; resident memory (VmRSS) 5 s after ready ("started", before the collection
 * layers/StartupMemory.ts asks for at 10 s) and IDLE_MS after ready with no request ("idle"); and on PostgreSQL, the memory BENCH_LABS
 * labs linked to a git repository add above the same service with the labs unlinked, once idle (130 s after the
 * links: their sync workers done, their git caches dropped after a quiet minute). BENCH_VARIANTS=compiled runs one.
 * Targets (on "idle"): idle ≤ 150 MB (PostgreSQL), ≤ 350 MB (PGlite); ready < 1.5 s (PostgreSQL), < 5 s (first PGlite start);
 * 1,000 linked labs < 50 MB above idle.
 */
import { Schema } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startGitServer, workingCopy } from "../test/support/GitServer.js"
import { baseEnv, createSchema, freePort, sleep, startCommand } from "./bench/Util.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const REPEAT = Number(process.env.BENCH_REPEAT ?? "2")
const LABS = Number(process.env.BENCH_LABS ?? "1000")
const SETTLE_MS = 5_000
const IDLE_MS = 60_000
/** A lab's git caches go after a quiet minute, looked for every minute (layers/GitDisk.ts): idle within 2 minutes. */
const LABS_IDLE_MS = 130_000
const ADMIN = `lsk_bench_admin_${randomBytes(12).toString("hex")}`

const decodeCreated = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ data: Schema.Struct({ id: Schema.String }) })))

const { flags, entry } = startCommand(ROOT)
const only = process.env.BENCH_VARIANTS?.split(",")
const allVariants: ReadonlyArray<{ readonly name: string; readonly args: ReadonlyArray<string> }> = [
  { name: "compiled", args: [...flags, ...entry] },
  { name: "tsx", args: [...flags, "--import", "tsx", "src/main.ts"] }
]
const variants = allVariants.filter((v) => only === undefined || only.includes(v.name))

interface Running {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly readyMs: number
}

const rssMiB = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0") / 1024
}

const start = async (args: ReadonlyArray<string>, dataDir: string, databaseUrl: string | undefined): Promise<Running> => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const env = { ...baseEnv(), PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN, GIT_ALLOWED_HOSTS: "127.0.0.1", LOG_LEVEL: "warning" }
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd: ROOT, env: databaseUrl ? { ...env, DATABASE_URL: databaseUrl } : env, stdio: ["ignore", "ignore", "inherit"] })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`)
    const ok = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false)
    if (ok) return { child, baseUrl, readyMs: performance.now() - started }
    if (performance.now() - started > 120_000) throw new Error("not ready within 120 s")
    await sleep(20)
  }
}

/** Resident memory 5 s after ready, and IDLE_MS after ready (no request in between). */
const startedAndIdle = async (running: Running) => {
  await sleep(SETTLE_MS)
  const started = await rssMiB(running.child.pid ?? 0)
  await sleep(IDLE_MS - SETTLE_MS)
  return [started, await rssMiB(running.child.pid ?? 0)] as const
}

const stop = (running: Running) =>
  new Promise<void>((resolve) => {
    running.child.once("exit", () => resolve())
    running.child.kill("SIGTERM")
  })

const call = async (running: Running, method: string, path: string, body: unknown) => {
  const response = await fetch(`${running.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text
}

const git = await startGitServer()
const repo = await git.createRepo("bench-start")
const wc = await workingCopy(repo)
await writeFile(join(wc.dir, "README.md"), "# bench\n")
await wc.commitAndPush("first")
await wc.remove()

console.log("building (npm run build)")
if (spawnSync(process.execPath, [join(ROOT, "scripts", "build.mjs")], { cwd: ROOT, stdio: "inherit" }).status !== 0) process.exit(1)

const rows: Array<string> = []
const base = await mkdtemp(join(tmpdir(), "lab-bench-start-"))
try {
  for (let round = 1; round <= REPEAT; round++) {
    for (const variant of variants) {
      const schema = await createSchema(DATABASE_URL, "bench_start")
      const pg = await start(variant.args, join(base, `${variant.name}-${round}-pg`), schema.url)
      const [pgStarted, pgIdle] = await startedAndIdle(pg)
      let labsDelta = Number.NaN
      if (LABS > 0) {
        const ids: Array<string> = []
        for (let i = 0; i < LABS; i++) {
          ids.push(decodeCreated(await call(pg, "POST", "/api/v1/labs", { slug: `bench-${i}`, name: `Bench ${i}`, plan: "team" })).data.id)
        }
        await sleep(SETTLE_MS)
        const unlinked = await rssMiB(pg.child.pid ?? 0)
        for (const labId of ids) await call(pg, "PATCH", "/api/v1/sync", { labId, repo, autoPushOnEdit: true })
        // idle: past the sweep that drops a lab's git caches after a quiet minute (layers/git/GitDisk.ts)
        await sleep(LABS_IDLE_MS)
        labsDelta = (await rssMiB(pg.child.pid ?? 0)) - unlinked
      }
      await stop(pg)
      await schema.drop()

      const dataDir = join(base, `${variant.name}-${round}-pglite`)
      const first = await start(variant.args, dataDir, undefined)
      const [pgliteStarted, pgliteIdle] = await startedAndIdle(first)
      await stop(first)
      const second = await start(variant.args, dataDir, undefined)
      await stop(second)

      const row =
        `${variant.name.padEnd(9)} round ${round}: ready PostgreSQL ${(pg.readyMs / 1000).toFixed(2)} s, PGlite first ${(first.readyMs / 1000).toFixed(2)} s, ` +
        `PGlite again ${(second.readyMs / 1000).toFixed(2)} s; RSS started → idle: PostgreSQL ${pgStarted.toFixed(0)} → ${pgIdle.toFixed(0)} MiB, ` +
        `PGlite ${pgliteStarted.toFixed(0)} → ${pgliteIdle.toFixed(0)} MiB; ` +
        `${LABS} linked labs +${labsDelta.toFixed(0)} MiB`
      console.log(row)
      rows.push(row)
    }
  }
} finally {
  await git.close()
  await rm(base, { recursive: true, force: true })
}
console.log(`\nbench:start (${REPEAT} rounds, alternating)\n${rows.join("\n")}`)
