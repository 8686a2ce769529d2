/**
 * Git sync benchmark: the service (as npm start runs it: node <flags> --import tsx src/main.ts, a child
 * process per repository size) against generated repositories served by git's
 * own `git http-backend` on loopback (test/support/GitServer.ts), and the git
 * CLI on the same repositories as the physical reference.
 *
 *   npm run bench:sync
 *
 * For each size (1,000, 10,000 and 50,000 text files of 1-2 KB, 100 per
 * directory, two directory levels) it measures:
 *   - initial sync: PATCH /api/v1/sync (link) + POST /api/v1/sync until it
 *     answers, against `git clone --depth 1 --no-checkout` + `git ls-tree -r` +
 *     `git cat-file --batch` over every blob, measured in the same run, in
 *     pairs (the git CLI, then the service with a new lab), BENCH_INITIAL_RUNS
 *     times: the ratio is the median of the pairs' (single runs vary by ±20 % on
 *     a shared machine), and the first pair, the first sync after the start, is shown too;
 *   - incremental sync of one changed file: an outside commit is pushed over
 *     HTTP, then POST /api/v1/sync is timed (the service's own pull; the
 *     commit + push is shown apart);
 *   - webhook to file visible: push a change, send the signed GitHub webhook,
 *     poll GET /api/v1/files until the new content shows;
 *   - peak memory (VmHWM) of the service process.
 *
 * Database: embedded PGlite, or DATABASE_URL (a fresh schema per size, dropped
 * at the end). Knobs: BENCH_SIZES (comma-separated, default 1000,10000,50000),
 * BENCH_INITIAL_RUNS (3), BENCH_INCREMENTAL_RUNS (5), BENCH_WEBHOOK_RUNS (3), BENCH_CPU_PROF=<dir>
 * (run the service under node --cpu-prof; profiles are written when it stops),
 * BENCH_LOG_DIR=<dir> (keep the service's log of each size there).
 */
import { Schema } from "effect"
import { execFile, spawn } from "node:child_process"
import { createHmac, randomBytes } from "node:crypto"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { type GitServer, startGitServer } from "../test/support/GitServer.js"
import { memoryOf, resetHwm, type Service, serviceRunner } from "./bench/Service.js"
import { describe, logTail, makeHousekeeping, redactUrl, sleep } from "./bench/Util.js"
import { fmt, median, prng, table } from "./bench/Report.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const run = promisify(execFile)

const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`)
  return n
}

const SIZES: ReadonlyArray<number> = (process.env["BENCH_SIZES"] ?? "1000,10000,50000").split(",").map((s) => {
  const n = Number(s.trim())
  if (!Number.isInteger(n) || n <= 0) throw new Error("BENCH_SIZES must list positive integers")
  return n
})
const INITIAL_RUNS = envInt("BENCH_INITIAL_RUNS", 3)
const INCREMENTAL_RUNS = envInt("BENCH_INCREMENTAL_RUNS", 5)
const WEBHOOK_RUNS = envInt("BENCH_WEBHOOK_RUNS", 3)
const CPU_PROF_DIR = process.env["BENCH_CPU_PROF"] ? resolve(process.env["BENCH_CPU_PROF"]) : undefined
const LOG_DIR = process.env["BENCH_LOG_DIR"] ? resolve(process.env["BENCH_LOG_DIR"]) : undefined
const FILES_PER_DIR = 100
const DIRS_PER_AREA = 10

const TARGET_INITIAL_RATIO = 3
const TARGET_INCREMENTAL_MS = 300
const TARGET_INCREMENTAL_GROWTH = 2
const TARGET_WEBHOOK_MS = 1000

// ---------------------------------------------------------------------------
// wire shapes, decoded with Schema

const Meta = Schema.Struct({ request_id: Schema.String, timestamp: Schema.String })
const LabBody = Schema.Struct({ data: Schema.Struct({ id: Schema.String }), meta: Meta })
const SyncStatusBody = Schema.Struct({ repo: Schema.String, lastSyncSha: Schema.NullOr(Schema.String) })
const SyncResultBody = Schema.Struct({
  ok: Schema.Boolean,
  pulled: Schema.Number,
  updated: Schema.Number,
  skipped: Schema.Number,
  removed: Schema.Number,
  sha: Schema.String
})
type SyncResultBody = typeof SyncResultBody.Type
const SecretBody = Schema.Struct({ secret: Schema.String, existed: Schema.Boolean, webhookUrl: Schema.String })
const FileBody = Schema.Struct({ data: Schema.Struct({ path: Schema.String, content: Schema.String, sha: Schema.String }), meta: Meta })
const ActivityBody = Schema.Struct({
  data: Schema.Array(
    Schema.Struct({ kind: Schema.String, message: Schema.String, data: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
  ),
  meta: Meta
})
const WebhookBody = Schema.Struct({ ok: Schema.Literal(true), action: Schema.String })
const SyncActivityData = Schema.Struct({ added: Schema.Number, updated: Schema.Number, removed: Schema.Number, skipped: Schema.Number })

// ---------------------------------------------------------------------------
// cleanup: children, temp dirs, the git server and PostgreSQL schemas go away on every exit path

const housekeeping = makeHousekeeping("the service")
const { tempDirs, cleanups, stopChild, cleanupAll, isInterrupted } = housekeeping
const { startService, freshSchema } = serviceRunner(housekeeping, { root: ROOT, cpuProfDir: CPU_PROF_DIR })

// ---------------------------------------------------------------------------
// helpers

const now = () => performance.now()

const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_AUTHOR_NAME: "Outside Author",
  GIT_AUTHOR_EMAIL: "outside@example.com",
  GIT_COMMITTER_NAME: "Outside Author",
  GIT_COMMITTER_EMAIL: "outside@example.com",
  GIT_TERMINAL_PROMPT: "0"
})

const git = async (cwd: string, ...args: ReadonlyArray<string>): Promise<string> =>
  (await run("git", [...args], { cwd, env: gitEnv(), maxBuffer: 256 * 1024 * 1024 })).stdout.trim()


// ---------------------------------------------------------------------------
// generated content: deterministic text, 1-2 KB per file

const WORDS = (
  "the of and to in is that for it as with was on be by this are from at or an have not which but " +
  "model data train loss batch epoch sample gradient layer token vector matrix tensor result baseline " +
  "experiment config seed metric accuracy recall precision dataset split validation test run job node " +
  "agent paper draft section figure table note idea review cite method setup ablation scale compute " +
  "function return const value index array string number object buffer stream parse encode decode"
).split(" ")


const EXTENSIONS = ["md", "ts", "py", "txt", "json"]

const pathOf = (i: number): string => {
  const dir = Math.floor(i / FILES_PER_DIR)
  const area = Math.floor(dir / DIRS_PER_AREA)
  const pad = (n: number, w: number) => String(n).padStart(w, "0")
  return `area-${pad(area, 3)}/module-${pad(dir, 4)}/file-${pad(i, 5)}.${EXTENSIONS[i % EXTENSIONS.length] ?? "txt"}`
}

const contentOf = (i: number, revision: number): string => {
  const rnd = prng(i * 7919 + revision * 104729 + 1)
  const target = 1000 + Math.floor(rnd() * 1000)
  const lines = [`# ${pathOf(i)} (revision ${revision})`]
  let size = (lines[0] ?? "").length + 1
  while (size < target) {
    const count = 6 + Math.floor(rnd() * 10)
    const words: Array<string> = []
    for (let w = 0; w < count; w++) words.push(WORDS[Math.floor(rnd() * WORDS.length)] ?? "x")
    const line = words.join(" ")
    lines.push(line)
    size += line.length + 1
  }
  return `${lines.join("\n")}\n`
}

/** Run `git fast-import` in `gitdir` with a stream produced chunk by chunk (respecting backpressure). */
const fastImport = (gitdir: string, produce: (write: (s: string) => Promise<void>) => Promise<void>) =>
  new Promise<void>((done, fail) => {
    const child = spawn("git", ["fast-import", "--quiet"], { cwd: gitdir, env: gitEnv(), stdio: ["pipe", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.once("error", fail)
    child.once("close", (code) => (code === 0 ? done() : fail(new Error(`git fast-import exited ${code}: ${stderr.slice(0, 2000)}`))))
    const write = (s: string) =>
      new Promise<void>((ok) => {
        if (child.stdin.write(s)) ok()
        else child.stdin.once("drain", () => ok())
      })
    produce(write)
      .then(() => child.stdin.end())
      .catch((error: unknown) => {
        child.kill("SIGKILL")
        fail(error instanceof Error ? error : new Error(String(error)))
      })
  })

const dataCmd = (s: string) => `data ${Buffer.byteLength(s, "utf8")}\n${s}\n`
let commitClock = 1_700_000_000
const commitHeader = (message: string) => `commit refs/heads/main\ncommitter Outside Author <outside@example.com> ${commitClock++} +0000\n${dataCmd(message)}`

/** A source repository with one commit of `files` generated files. */
const generateRepo = async (gitdir: string, files: number) => {
  await git(ROOT, "init", "--bare", "--quiet", "--initial-branch=main", gitdir)
  await fastImport(gitdir, async (write) => {
    let buf = commitHeader(`${files} generated files\n`)
    for (let i = 0; i < files; i++) {
      buf += `M 100644 inline ${pathOf(i)}\n${dataCmd(contentOf(i, 0))}`
      if (buf.length > 1 << 20) {
        await write(buf)
        buf = ""
      }
    }
    await write(`${buf}\n`)
  })
}

/** One outside commit changing file `i` to `revision`; returns the commit id. */
const commitChange = async (gitdir: string, i: number, revision: number): Promise<string> => {
  await fastImport(gitdir, (write) =>
    write(`${commitHeader(`change ${pathOf(i)} to revision ${revision}\n`)}from refs/heads/main^0\nM 100644 inline ${pathOf(i)}\n${dataCmd(contentOf(i, revision))}\n`)
  )
  return git(gitdir, "rev-parse", "refs/heads/main")
}

// ---------------------------------------------------------------------------
// the physical reference: the git CLI

interface Reference {
  /** The shallow clone, kept for the incremental reference (fetch --depth 1 of each change). */
  readonly dir: string
  readonly ms: number
  readonly cloneMs: number
  readonly blobs: number
  readonly bytes: number
}

const catFileAll = (dir: string, oids: ReadonlyArray<string>) =>
  new Promise<number>((done, fail) => {
    const child = spawn("git", ["cat-file", "--batch"], { cwd: dir, stdio: ["pipe", "pipe", "ignore"] })
    let bytes = 0
    child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length))
    child.once("error", fail)
    child.once("close", (code) => (code === 0 ? done(bytes) : fail(new Error(`git cat-file exited ${code}`))))
    child.stdin.end(`${oids.join("\n")}\n`)
  })

const reference = async (url: string, workDir: string, label: string): Promise<Reference> => {
  const dir = join(workDir, `reference-${label}`)
  const started = now()
  await run("git", ["clone", "--quiet", "--depth", "1", "--no-checkout", "--single-branch", "--branch", "main", url, dir], {
    env: gitEnv()
  })
  const cloneMs = now() - started
  const listing = (await run("git", ["ls-tree", "-r", "-z", "HEAD"], { cwd: dir, maxBuffer: 256 * 1024 * 1024 })).stdout
  const oids: Array<string> = []
  for (const entry of listing.split("\0")) {
    // <mode> SP <type> SP <oid> TAB <path>
    const m = /^\d+ blob ([0-9a-f]{40})\t/.exec(entry)
    if (m?.[1]) oids.push(m[1])
  }
  const bytes = await catFileAll(dir, oids)
  const ms = now() - started
  return { dir, ms, cloneMs, blobs: oids.length, bytes }
}

/** The git CLI's incremental pull of the same change: fetch --depth 1, then read the changed blob. */
const referenceIncremental = async (ref: Reference, path: string): Promise<number> => {
  const started = now()
  await run("git", ["fetch", "--quiet", "--depth", "1", "origin", "main"], { cwd: ref.dir, env: gitEnv() })
  await run("git", ["cat-file", "blob", `FETCH_HEAD:${path}`], { cwd: ref.dir, maxBuffer: 16 * 1024 * 1024 })
  return now() - started
}

const call = async <A, I>(
  schema: Schema.Schema<A, I>,
  service: Service,
  path: string,
  token: string,
  init: { readonly method?: string; readonly json?: unknown; readonly expect: number; readonly timeoutMs?: number }
): Promise<A> => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${token}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    signal: AbortSignal.timeout(init.timeoutMs ?? 30_000)
  })
  const text = await response.text()
  if (response.status !== init.expect) {
    throw new Error(`${init.method ?? "GET"} ${path}: expected ${init.expect}, got ${response.status}: ${text.slice(0, 500)}`)
  }
  return Schema.decodeUnknownSync(Schema.parseJson(schema))(text)
}

const forceSync = (service: Service, token: string, labId: string, timeoutMs = 30_000) =>
  call(SyncResultBody, service, "/api/v1/sync", token, { method: "POST", json: { labId }, expect: 200, timeoutMs })

const fileUrl = (labId: string, i: number) => `/api/v1/files?labId=${encodeURIComponent(labId)}&path=${encodeURIComponent(`/${pathOf(i)}`)}`

const readFileContent = async (service: Service, token: string, labId: string, i: number): Promise<string | undefined> => {
  const response = await fetch(`${service.baseUrl}${fileUrl(labId, i)}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  if (response.status === 404) return undefined
  if (response.status !== 200) throw new Error(`GET ${fileUrl(labId, i)}: ${response.status}: ${text.slice(0, 300)}`)
  return Schema.decodeUnknownSync(Schema.parseJson(FileBody))(text).data.content
}

// ---------------------------------------------------------------------------
// one size

interface SizeResult {
  readonly files: number
  readonly generateMs: number
  readonly packMiB: number
  readonly reference: Reference
  /** Each pair's git CLI and service times; the first is the first sync after the service started. */
  readonly initialRuns: ReadonlyArray<{ readonly referenceMs: number; readonly serviceMs: number }>
  readonly noopMs: number
  readonly pushMs: ReadonlyArray<number>
  readonly incrementalMs: ReadonlyArray<number>
  readonly referenceIncrementalMs: ReadonlyArray<number>
  readonly webhookMs: ReadonlyArray<number>
  readonly startHwm: number
  readonly startRss: number
  readonly hwmReset: boolean
  readonly hwm: number
  readonly rssEnd: number
}

const benchSize = async (
  files: number,
  server: GitServer,
  workDir: string,
  adminKey: string,
  databaseUrl: string | undefined
): Promise<SizeResult> => {
  const label = `${files}`
  const tag = `[${files.toLocaleString("en-US")} files]`
  const say = (message: string) => console.log(`${tag} ${message}`)

  // the repository: generated into a local source repository, pushed to the served one
  let started = now()
  const source = join(workDir, `source-${label}.git`)
  await generateRepo(source, files)
  const name = `bench-${label}`
  const url = await server.createRepo(name)
  await git(source, "push", "--quiet", join(server.root, `${name}.git`), "main:main")
  const generateMs = now() - started
  const packBytes = Number((await git(join(server.root, `${name}.git`), "count-objects", "-v")).match(/size-pack: (\d+)/)?.[1] ?? "0") / 1024
  say(`generated and pushed in ${(generateMs / 1000).toFixed(1)} s (served pack ${packBytes.toFixed(1)} MiB)`)

  // the physical reference
  const ref = await reference(url, workDir, label)
  if (ref.blobs !== files) throw new Error(`the reference read ${ref.blobs} blobs, expected ${files}`)
  say(
    `git CLI: clone --depth 1 --no-checkout ${ref.cloneMs.toFixed(0)} ms, + ls-tree + cat-file --batch of ${ref.blobs} blobs (${(ref.bytes / 1048576).toFixed(1)} MiB) = ${ref.ms.toFixed(0)} ms`
  )

  // the service, fresh for this size
  const dataDir = join(workDir, `service-${label}`)
  mkdirSync(dataDir, { recursive: true })
  const dbUrl = databaseUrl ? await freshSchema(databaseUrl, label) : undefined
  const service = await startService(dataDir, adminKey, dbUrl, label, join(workDir, `service-${label}.log`))
  try {
    // PGlite's first start (initdb) has its own peak: note it, then reset the mark so the figure below is the sync's
    const startMemory = memoryOf(service.pid)
    const startHwm = startMemory.hwm
    const startRss = startMemory.rss
    const hwmReset = resetHwm(service.pid)
    /** A new lab linked to the repository and synced: link + forced sync until it answers, then checked. */
    const initialSync = async (checkContent: boolean) => {
      const lab = await call(LabBody, service, "/api/v1/labs", adminKey, {
        method: "POST",
        json: { slug: `bench-sync-${label}-${randomBytes(3).toString("hex")}`, name: `Sync bench ${label}`, plan: "team" },
        expect: 201
      })
      const labId = lab.data.id
      const started = now()
      await call(SyncStatusBody, service, "/api/v1/sync", adminKey, { method: "PATCH", json: { labId, repo: url, autoPushOnEdit: false }, expect: 200 })
      const answer = await forceSync(service, adminKey, labId, 600_000)
      const ms = now() - started
      const activity = await call(ActivityBody, service, `/api/v1/activity?labId=${encodeURIComponent(labId)}&limit=20`, adminKey, { expect: 200 })
      const counts = { added: 0, updated: 0, removed: 0, skipped: 0 }
      for (const entry of activity.data) {
        if (entry.kind !== "sync") continue
        const d = Schema.decodeUnknownSync(SyncActivityData)(entry.data)
        counts.added += d.added
        counts.updated += d.updated
        counts.removed += d.removed
        counts.skipped += d.skipped
      }
      if (counts.added !== files) throw new Error(`the initial sync added ${counts.added} files, expected ${files}`)
      // (the generated content, before the changes measured below)
      for (const i of checkContent ? [0, Math.floor(files / 2), files - 1] : []) {
        const content = await readFileContent(service, adminKey, labId, i)
        if (content !== contentOf(i, 0)) throw new Error(`/${pathOf(i)} does not hold the generated content after the initial sync`)
      }
      return { labId, ms, counts, answer }
    }

    // the first pair: the git CLI ran before the service started; this lab is the one the later steps use
    const first = await initialSync(true)
    const labId = first.labId
    const initialRuns = [{ referenceMs: ref.ms, serviceMs: first.ms }]
    say(
      `service initial sync (link + POST /sync): ${first.ms.toFixed(0)} ms = ${(first.ms / ref.ms).toFixed(2)}x git;` +
        ` syncs recorded: ${first.counts.added} added, ${first.counts.updated} updated, ${first.counts.skipped} skipped;` +
        ` POST answer: pulled ${first.answer.pulled}, updated ${first.answer.updated}, sha ${first.answer.sha.slice(0, 7)}`
    )
    const secret = await call(SecretBody, service, "/api/v1/sync/secret", adminKey, { method: "POST", json: { labId }, expect: 200 })

    // a sync with nothing new: the fixed cost of a pull
    started = now()
    const noop = await forceSync(service, adminKey, labId)
    const noopMs = now() - started
    if (noop.pulled + noop.updated + noop.removed !== 0) throw new Error(`a sync with nothing new changed files: ${JSON.stringify(noop)}`)

    // incremental: one outside commit changing one file, then a forced sync
    let revision = 0
    const changedFile = (k: number) => (k * 7_919 + 13) % files
    const pushMs: Array<number> = []
    const incrementalMs: Array<number> = []
    const referenceIncrementalMs: Array<number> = []
    for (let k = 0; k < INCREMENTAL_RUNS; k++) {
      const i = changedFile(k)
      revision++
      started = now()
      const sha = await commitChange(source, i, revision)
      await git(source, "push", "--quiet", url, "main:main")
      pushMs.push(now() - started)
      started = now()
      const result = await forceSync(service, adminKey, labId)
      incrementalMs.push(now() - started)
      if (result.updated !== 1 || result.pulled !== 0 || result.removed !== 0 || result.sha !== sha) {
        throw new Error(`incremental sync ${k + 1}: expected 1 update to ${sha.slice(0, 7)}, got ${JSON.stringify(result)}`)
      }
      if ((await readFileContent(service, adminKey, labId, i)) !== contentOf(i, revision)) throw new Error(`/${pathOf(i)} was not updated`)
      referenceIncrementalMs.push(await referenceIncremental(ref, pathOf(i)))
    }
    say(
      `incremental (1 file): POST /sync ${incrementalMs.map((ms) => ms.toFixed(0)).join(", ")} ms (median ${median(incrementalMs).toFixed(0)});` +
        ` outside commit + push ${median(pushMs).toFixed(0)} ms median; no-op sync ${noopMs.toFixed(0)} ms;` +
        ` git CLI fetch --depth 1 + cat-file of the change ${median(referenceIncrementalMs).toFixed(0)} ms median`
    )

    // webhook: push, signed GitHub webhook, poll the file until the new content shows
    const webhookMs: Array<number> = []
    for (let k = 0; k < WEBHOOK_RUNS; k++) {
      const i = changedFile(INCREMENTAL_RUNS + k)
      revision++
      const sha = await commitChange(source, i, revision)
      await git(source, "push", "--quiet", url, "main:main")
      const expected = contentOf(i, revision)
      const body = JSON.stringify({
        ref: "refs/heads/main",
        after: sha,
        repository: { clone_url: url, full_name: name },
        commits: [{ id: sha, modified: [pathOf(i)] }]
      })
      const signature = `sha256=${createHmac("sha256", secret.secret).update(body).digest("hex")}`
      started = now()
      const hook = await fetch(`${service.baseUrl}/api/webhooks/github`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "push",
          "x-github-delivery": `bench-${label}-${k}-${randomBytes(4).toString("hex")}`,
          "x-hub-signature-256": signature
        },
        body,
        signal: AbortSignal.timeout(10_000)
      })
      const hookText = await hook.text()
      if (hook.status !== 202) throw new Error(`webhook: expected 202, got ${hook.status}: ${hookText.slice(0, 300)}`)
      const answer = Schema.decodeUnknownSync(Schema.parseJson(WebhookBody))(hookText)
      if (answer.action !== "queued") throw new Error(`webhook: expected queued, got ${answer.action}`)
      for (;;) {
        if ((await readFileContent(service, adminKey, labId, i)) === expected) break
        if (now() - started > 60_000) throw new Error(`webhook: /${pathOf(i)} did not show the pushed content within 60 s`)
        await sleep(10)
      }
      webhookMs.push(now() - started)
    }
    say(`webhook to file visible: ${webhookMs.map((ms) => ms.toFixed(0)).join(", ")} ms`)

    // the other pairs last: the labs they add would keep the search indexer busy during the measurements above
    for (let k = 2; k <= INITIAL_RUNS; k++) {
      const again = await reference(url, workDir, `${label}-${k}`)
      rmSync(again.dir, { recursive: true, force: true })
      const run = await initialSync(false)
      initialRuns.push({ referenceMs: again.ms, serviceMs: run.ms })
      say(`pair ${k}: git CLI ${again.ms.toFixed(0)} ms, service initial sync of a new lab ${run.ms.toFixed(0)} ms = ${(run.ms / again.ms).toFixed(2)}x`)
    }

    const mem = memoryOf(service.pid)
    say(
      `service memory: VmHWM ${mem.hwm.toFixed(0)} MiB ${hwmReset ? "during the syncs (the mark was reset after start, whose own peak was" : "(not reset after start: includes the start's peak of"} ${startHwm.toFixed(0)} MiB);` +
        ` VmRSS ${startRss.toFixed(0)} MiB before the syncs, ${mem.rss.toFixed(0)} MiB after`
    )
    return {
      files,
      generateMs,
      packMiB: packBytes,
      reference: ref,
      initialRuns,
      noopMs,
      pushMs,
      incrementalMs,
      referenceIncrementalMs,
      webhookMs,
      startHwm,
      startRss,
      hwmReset,
      hwm: mem.hwm,
      rssEnd: mem.rss
    }
  } catch (error) {
    if (!isInterrupted()) process.stderr.write(`${tag} failed; the service's log ends with:\n${logTail(service.logPath)}\n`)
    throw error
  } finally {
    await stopChild(service.child)
    if (LOG_DIR) copyFileSync(service.logPath, join(LOG_DIR, `service-${label}.log`))
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(source, { recursive: true, force: true })
    rmSync(ref.dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------
// report



/** The initial sync's figures: medians over the pairs, the ratio being the median of the pairs' ratios. */
const initialOf = (r: SizeResult) => {
  const firstRun = r.initialRuns[0]
  return {
    referenceMs: median(r.initialRuns.map((p) => p.referenceMs)),
    serviceMs: median(r.initialRuns.map((p) => p.serviceMs)),
    ratio: median(r.initialRuns.map((p) => p.serviceMs / p.referenceMs)),
    firstMs: firstRun?.serviceMs ?? Number.NaN,
    firstRatio: firstRun ? firstRun.serviceMs / firstRun.referenceMs : Number.NaN
  }
}

const report = (results: ReadonlyArray<SizeResult>, failures: ReadonlyArray<string>) => {
  console.log(
    `\nResults (times in ms; initial: median of ${INITIAL_RUNS} pairs, the first sync after the start apart; incremental and webhook: median of the runs, max in brackets)\n`
  )
  console.log(
    table(
      [
        "files",
        "pack MiB",
        "git CLI",
        "service initial",
        "ratio",
        "first sync (ratio)",
        "no-op sync",
        "incr. sync",
        "git CLI incr.",
        "commit+push",
        "webhook→visible",
        "VmHWM MiB (start)",
        "RSS before/after"
      ],
      results.map((r) => {
        const initial = initialOf(r)
        return [
          r.files.toLocaleString("en-US"),
          fmt(r.packMiB, 1),
          fmt(initial.referenceMs),
          fmt(initial.serviceMs),
          `${fmt(initial.ratio, 2)}x`,
          `${fmt(initial.firstMs)} (${fmt(initial.firstRatio, 2)}x)`,
          fmt(r.noopMs),
          `${fmt(median(r.incrementalMs))} [${fmt(Math.max(...r.incrementalMs))}]`,
          fmt(median(r.referenceIncrementalMs)),
          fmt(median(r.pushMs)),
          `${fmt(median(r.webhookMs))} [${fmt(Math.max(...r.webhookMs))}]`,
          `${fmt(r.hwm)}${r.hwmReset ? "" : "*"} (${fmt(r.startHwm)})`,
          `${fmt(r.startRss)}/${fmt(r.rssEnd)}`
        ]
      }),
      1
    )
  )

  const verdicts: Array<string> = []
  let pass = failures.length === 0
  const verdict = (ok: boolean, text: string) => {
    pass &&= ok
    verdicts.push(`${ok ? "PASS" : "FAIL"}  ${text}`)
  }
  for (const r of results) {
    const n = r.files.toLocaleString("en-US")
    const initial = initialOf(r)
    verdict(
      initial.ratio <= TARGET_INITIAL_RATIO,
      `${n} files: initial sync ${fmt(initial.ratio, 2)}x the git CLI, median of ${r.initialRuns.length} pairs ` +
        `(${r.initialRuns.map((p) => `${fmt(p.serviceMs)}/${fmt(p.referenceMs)}`).join(", ")} ms; the first ${fmt(initial.firstRatio, 2)}x) (target <= ${TARGET_INITIAL_RATIO}x)`
    )
    const incr = median(r.incrementalMs)
    verdict(incr < TARGET_INCREMENTAL_MS, `${n} files: incremental sync of 1 file ${fmt(incr)} ms median (target < ${TARGET_INCREMENTAL_MS} ms)`)
    const hook = Math.max(...r.webhookMs)
    verdict(hook < TARGET_WEBHOOK_MS, `${n} files: webhook to file visible ${fmt(hook)} ms worst of ${r.webhookMs.length} (target < ${TARGET_WEBHOOK_MS} ms)`)
  }
  const smallest = results[0]
  const largest = results.at(-1)
  if (smallest && largest && largest !== smallest) {
    const growth = median(largest.incrementalMs) / median(smallest.incrementalMs)
    verdict(
      growth < TARGET_INCREMENTAL_GROWTH,
      `incremental sync grows ${fmt(growth, 2)}x from ${smallest.files.toLocaleString("en-US")} to ${largest.files.toLocaleString("en-US")} files (target < ${TARGET_INCREMENTAL_GROWTH}x)`
    )
  }
  for (const f of failures) verdicts.push(`FAIL  ${f}`)
  console.log("\nTargets\n")
  for (const v of verdicts) console.log(v)
  console.log(
    `\nNotes: one service process per size (as npm start runs it, node --import tsx src/main.ts, so VmHWM is the server's own high-water mark,` +
      ` PGlite included when embedded; it is reset through /proc/<pid>/clear_refs once the service is ready, so the figure is the peak` +
      ` of the syncs (never below the RSS when it was reset, shown as "RSS before") and the start's own peak, PGlite's initdb when embedded,` +
      ` is shown in brackets; * marks a mark that could not be reset); "initial" runs from PATCH /api/v1/sync (link, which queues a pull) until POST /api/v1/sync answers,` +
      ` measured in pairs with the git CLI (a new lab each time, so each is a first sync of that lab; the first pair is the first sync after the start);` +
      ` "git CLI" is clone --depth 1 --no-checkout + ls-tree -r + cat-file --batch of every blob over the same loopback git http-backend;` +
      ` "incr. sync" is POST /api/v1/sync after an outside commit of one file was pushed (the commit + push itself is shown apart),` +
      ` "git CLI incr." the git CLI's fetch --depth 1 of the same change into the reference clone + cat-file of the changed blob;` +
      ` "no-op sync" is POST /api/v1/sync with nothing new; the webhook time runs from sending the signed webhook until GET /api/v1/files` +
      ` shows the new content (polled every 10 ms). ${availableParallelism()} CPUs; the git server, the git CLI and this driver share them with the service.`
  )
  return pass
}

// ---------------------------------------------------------------------------

const main = async () => {
  const workDir = mkdtempSync(join(tmpdir(), "bench-sync-"))
  tempDirs.add(workDir)
  const adminKey = `bench_admin_${randomBytes(18).toString("hex")}`
  const databaseUrl = process.env["DATABASE_URL"] || undefined
  const started = Date.now()
  console.log(
    `Sync bench: ${SIZES.map((n) => n.toLocaleString("en-US")).join(", ")} files; database ${databaseUrl ? `PostgreSQL at ${redactUrl(databaseUrl)} (a fresh schema per size)` : "embedded PGlite"};` +
      ` ${INCREMENTAL_RUNS} incremental and ${WEBHOOK_RUNS} webhook runs per size.`
  )
  if (CPU_PROF_DIR) console.log(`CPU profiles of the service go to ${CPU_PROF_DIR}`)

  const server = await startGitServer()
  cleanups.push(() => server.close())
  const results: Array<SizeResult> = []
  const failures: Array<string> = []
  try {
    for (const files of SIZES) {
      if (isInterrupted()) break
      try {
        results.push(await benchSize(files, server, workDir, adminKey, databaseUrl))
      } catch (error) {
        if (isInterrupted()) break
        failures.push(`${files.toLocaleString("en-US")} files: ${describe(error)}`)
        console.log(`[${files.toLocaleString("en-US")} files] FAILED: ${describe(error)}`)
      }
    }
  } finally {
    await cleanupAll()
  }
  if (isInterrupted()) return // the signal handler exits once it has cleaned up
  const pass = report(results, failures)
  console.log(`\n${pass ? "All targets met" : "Some targets missed"}; run took ${((Date.now() - started) / 1000).toFixed(0)} s.`)
  process.exitCode = pass ? 0 : 1
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench-sync failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  await cleanupAll()
  process.exit(1)
})
