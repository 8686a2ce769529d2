/**
 * Auto-push drain benchmark (run by `npm run bench:sync` after the sync figures, or alone with
 * `npm run bench:push`): how fast the outbox becomes commits in the repository, and the memory it takes,
 * beside the git CLI making and pushing the same commits, in the same run.
 *
 * For each count N (BENCH_PUSH_WRITES, default 3000,7000) of writes to one directory that already holds
 * BENCH_PUSH_DIR_FILES files (default 1000), against git's own `git http-backend` on loopback:
 *   - live: N API writes (4 clients at once) with the host up; the drain is the time from the last write's
 *     answer until `pendingCommits` is 0, and the first landing the time from then until the first of the
 *     writes still pending has landed;
 *   - queued: N writes acknowledged while the host answers 503, the service restarted, the host back: the
 *     rate is N over the time from ready until `pendingCommits` is 0; memory is VmRSS at ready and VmHWM during;
 *   - the git CLI: the same N commits (one per write, the same paths and contents) made by `git fast-import`
 *     in a clone and pushed with `git push`, each timed.
 * Every service commit is checked to be in the repository once (`git rev-list --count`), and `git fsck` passes (after
 * `git repack -a -d`, as a host's housekeeping does).
 * Database: embedded PGlite, or DATABASE_URL (a fresh schema per count). BENCH_CPU_PROF=<dir>: run the service
 * under node --cpu-prof (a directory per count and phase).
 */
import { execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Schema } from "effect"
import { startGitServer, workingCopy, type GitServer } from "../test/support/GitServer.js"
import { memoryOf, resetHwm, type Service, serviceRunner } from "./bench/Service.js"
import { describe, makeHousekeeping, redactUrl, sleep } from "./bench/Util.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const run = promisify(execFile)
const COUNTS = (process.env["BENCH_PUSH_WRITES"] ?? "3000,7000").split(",").map((s) => Number.parseInt(s, 10))
const DIR_FILES = Number.parseInt(process.env["BENCH_PUSH_DIR_FILES"] ?? "1000", 10)
const CLIENTS = 4
const TARGET_COMMITS_PER_SECOND = 500
const SERVICE_EMAIL = "lab-service@users.noreply.local"

const housekeeping = makeHousekeeping("the service")
const { tempDirs, cleanupAll, stopChild } = housekeeping
const CPU_PROF_DIR = process.env["BENCH_CPU_PROF"] ? resolve(process.env["BENCH_CPU_PROF"]) : undefined
const { startService, freshSchema } = serviceRunner(housekeeping, { root: ROOT, cpuProfDir: CPU_PROF_DIR })

const Envelope = <A, I>(data: Schema.Schema<A, I>) => Schema.Struct({ data })
const Lab = Envelope(Schema.Struct({ id: Schema.String }))
const SyncStatus = Schema.Struct({ pendingCommits: Schema.Number, lastSyncSha: Schema.NullOr(Schema.String) })

const call = async <A, I>(service: Service, token: string, method: string, path: string, schema: Schema.Schema<A, I>, json?: unknown) => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(60_000)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
  return Schema.decodeUnknownSync(Schema.parseJson(schema))(text)
}

const contentOf = (name: string) => `# ${name}\n\n${`measured ${name} `.repeat(60)}\n`
const gitIn = (cwd: string) => (...args: ReadonlyArray<string>) =>
  run("git", [...args], { cwd, maxBuffer: 256 * 1024 * 1024 }).then((r) => r.stdout.trim())

/** `git fast-import` in `dir`: one commit per path on top of main, as the service makes them. */
const fastImport = (dir: string, paths: ReadonlyArray<string>, parent: string) =>
  new Promise<void>((done, fail) => {
    const child = spawn("git", ["fast-import", "--quiet"], { cwd: dir, stdio: ["pipe", "ignore", "inherit"] })
    child.once("error", fail)
    child.once("exit", (code) => (code === 0 ? done() : fail(new Error(`git fast-import exited ${code}`))))
    const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`
    let stream = ""
    paths.forEach((path, i) => {
      stream += `commit refs/heads/main\ncommitter Reference <ref@example.com> ${1_700_000_000 + i} +0000\n${data(`Update ${path}`)}`
      if (i === 0) stream += `from ${parent}\n`
      stream += `M 100644 inline ${path}\n${data(contentOf(path))}`
    })
    child.stdin.end(stream)
  })

const timed = async <A>(f: () => Promise<A>) => {
  const start = performance.now()
  const value = await f()
  return { value, ms: performance.now() - start }
}

/** Poll the lab's status until nothing is pending; the peak VmHWM meanwhile. */
const drained = async (service: Service, token: string, labId: string, timeoutMs = 900_000) => {
  const start = performance.now()
  let firstLanding: number | undefined
  let lastPending = Number.POSITIVE_INFINITY
  for (;;) {
    const status = await call(service, token, "GET", `/api/v1/sync?labId=${labId}`, SyncStatus)
    if (status.pendingCommits < lastPending && lastPending !== Number.POSITIVE_INFINITY) firstLanding ??= performance.now() - start
    lastPending = status.pendingCommits
    if (status.pendingCommits === 0) return { ms: performance.now() - start, firstLandingMs: firstLanding ?? 0 }
    if (performance.now() - start > timeoutMs) throw new Error(`${status.pendingCommits} writes still pending after ${timeoutMs / 1000} s`)
    await sleep(100)
  }
}

const writeAll = async (service: Service, token: string, labId: string, paths: ReadonlyArray<string>) => {
  let next = 0
  const worker = async () => {
    for (let i = next++; i < paths.length; i = next++) {
      const path = paths[i] ?? ""
      await call(service, token, "POST", "/api/v1/files", Schema.Unknown, { labId, path: `/${path}`, content: contentOf(path) })
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, worker))
  return { ms: performance.now() - start }
}

interface CountResult {
  readonly writes: number
  readonly apiPerSecond: number
  readonly liveFirstLandingMs: number
  readonly liveDrainAfterLastMs: number
  readonly queuedDrainMs: number
  readonly rssAtReady: number
  readonly hwmDuringDrain: number
  readonly referenceBuildMs: number
  readonly referencePushMs: number
  /** Of the drain and of the git CLI's push: the time the git host itself spent receiving (git receive-pack). */
  readonly queuedHostMs: number
  readonly referenceHostMs: number
}

const benchCount = async (server: GitServer, workDir: string, writes: number, databaseUrl: string | undefined): Promise<CountResult> => {
  const label = `push-${writes}`
  const svcUrl = await server.createRepo(`${label}-svc`)
  const refUrl = await server.createRepo(`${label}-ref`)
  const seed = await workingCopy(svcUrl)
  await mkdir(join(seed.dir, "runs"))
  for (let i = 0; i < DIR_FILES; i++) await writeFile(join(seed.dir, "runs", `seed${i}.md`), contentOf(`runs/seed${i}.md`))
  const c0 = await seed.commitAndPush("seed")
  await seed.git("push", "--quiet", refUrl, "HEAD:refs/heads/main")
  await seed.remove()

  const live = Array.from({ length: writes }, (_, i) => `runs/live${i}.md`)
  const queued = Array.from({ length: writes }, (_, i) => `runs/queued${i}.md`)

  // the git CLI: the same commits, built by fast-import, pushed by git push (the queued ones timed)
  const refDir = mkdtempSync(join(workDir, "ref-"))
  const ref = gitIn(refDir)
  await run("git", ["clone", "--quiet", refUrl, refDir])
  await fastImport(refDir, live, c0)
  await ref("push", "--quiet", "origin", "main")
  const build = await timed(async () => fastImport(refDir, queued, await ref("rev-parse", "main")))
  const refHostBefore = server.receiveMillis()
  const push = await timed(() => ref("push", "--quiet", "origin", "main"))
  const referenceHostMs = server.receiveMillis() - refHostBefore

  const adminKey = `bench_admin_${randomBytes(18).toString("hex")}`
  const dataDir = mkdtempSync(join(workDir, "data-"))
  const dbUrl = databaseUrl ? await freshSchema(databaseUrl, label) : undefined
  const logPath = join(workDir, `${label}.log`)
  let service = await startService(dataDir, adminKey, dbUrl, label, logPath)
  const lab = await call(service, adminKey, "POST", "/api/v1/labs", Lab, { slug: label, name: label, plan: "team" })
  const labId = lab.data.id
  await call(service, adminKey, "PATCH", "/api/v1/sync", SyncStatus, { labId, repo: svcUrl, autoPushOnEdit: true })
  for (let s = await call(service, adminKey, "GET", `/api/v1/sync?labId=${labId}`, SyncStatus); s.lastSyncSha !== c0; ) {
    await sleep(100)
    s = await call(service, adminKey, "GET", `/api/v1/sync?labId=${labId}`, SyncStatus)
  }

  const liveWrites = await writeAll(service, adminKey, labId, live)
  const liveDrain = await drained(service, adminKey, labId)

  server.failWith(503, Number.POSITIVE_INFINITY)
  await writeAll(service, adminKey, labId, queued)
  await stopChild(service.child)
  server.failWith(0, 0)
  service = await startService(dataDir, adminKey, dbUrl, `${label}-queued`, logPath)
  const rssAtReady = memoryOf(service.pid).rss
  resetHwm(service.pid)
  const hostBefore = server.receiveMillis()
  const queuedDrain = await drained(service, adminKey, labId)
  const queuedHostMs = server.receiveMillis() - hostBefore
  const hwm = memoryOf(service.pid).hwm
  await stopChild(service.child)

  const bare = gitIn(join(server.root, `${label}-svc.git`))
  const commits = Number(await bare("rev-list", "--count", `--author=${SERVICE_EMAIL}`, "main"))
  if (commits !== 2 * writes) throw new Error(`${commits} service commits in the repository for ${2 * writes} writes`)
  // the host's own housekeeping first: git fsck cannot open the indexes of the thousands of packs small pushes leave
  await bare("repack", "-a", "-d", "-q")
  await bare("fsck", "--strict", "--no-progress")
  return {
    writes,
    apiPerSecond: (writes * 1000) / liveWrites.ms,
    liveFirstLandingMs: liveDrain.firstLandingMs,
    liveDrainAfterLastMs: liveDrain.ms,
    queuedDrainMs: queuedDrain.ms,
    rssAtReady,
    hwmDuringDrain: hwm,
    referenceBuildMs: build.ms,
    referencePushMs: push.ms,
    queuedHostMs,
    referenceHostMs
  }
}

const main = async () => {
  const workDir = mkdtempSync(join(tmpdir(), "bench-push-"))
  tempDirs.add(workDir)
  const databaseUrl = process.env["DATABASE_URL"] || undefined
  console.log(
    `Push drain bench: ${COUNTS.join(", ")} writes to a directory of ${DIR_FILES} files; database ${databaseUrl ? `PostgreSQL at ${redactUrl(databaseUrl)}` : "embedded PGlite"}.`
  )
  const server = await startGitServer()
  housekeeping.cleanups.push(() => server.close())
  const rows: Array<CountResult> = []
  let pass = true
  try {
    for (const writes of COUNTS) rows.push(await benchCount(server, workDir, writes, databaseUrl))
  } catch (error) {
    pass = false
    console.log(`FAILED: ${describe(error)}`)
  } finally {
    await cleanupAll()
  }
  const f = (n: number, digits = 0) => n.toFixed(digits)
  console.log(
    "\nwrites | API writes/s | live: first landed, drained after last write | queued: drain (of it, the host receiving), commits/s | RSS at ready → peak during drain | git CLI: fast-import, push (of it, the host receiving), commits/s"
  )
  for (const r of rows) {
    const rate = (r.writes * 1000) / r.queuedDrainMs
    const reference = (r.writes * 1000) / (r.referenceBuildMs + r.referencePushMs)
    const ok = rate >= TARGET_COMMITS_PER_SECOND
    pass &&= ok
    console.log(
      `${r.writes} | ${f(r.apiPerSecond)} | ${f(r.liveFirstLandingMs)} ms, ${f(r.liveDrainAfterLastMs)} ms | ${f(r.queuedDrainMs)} ms (${f(r.queuedHostMs)} ms), ${f(rate)}/s ${ok ? "(target ≥ 500/s met)" : "(target ≥ 500/s MISSED)"} | ${f(r.rssAtReady)} → ${f(r.hwmDuringDrain)} MiB | ${f(r.referenceBuildMs)} ms, ${f(r.referencePushMs)} ms (${f(r.referenceHostMs)} ms), ${f(reference)}/s`
    )
  }
  console.log(pass ? "All push targets met." : "Some push targets missed.")
  process.exitCode = pass ? 0 : 1
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench-push failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  await cleanupAll()
  process.exit(1)
})
