/**
 * Sync recovery benchmark: how hard the service hits a git host that is down, and how soon the writes made during the
 * outage land once it is back. The deployment (a real `src/main.ts` process, PGlite, git on disk) against git's own
 * `git http-backend` on loopback (test/support/GitServer.ts), which answers 503 during the outage.
 *
 *   npm run bench:recovery
 *   BENCH_REFERENCE_ROOT=/path/to/a/checkout/of/main npm run bench:recovery
 *
 * For this checkout, and for the reference checkout when given (measured in the same run, one after the other): a
 * lab with auto-push, an outage of BENCH_OUTAGE_SECONDS (30) with a write through the API every BENCH_WRITE_MS (250),
 * then the host back. Printed: the requests the host received during the outage, and the time from its return until
 * `GET /sync` shows no pending commit (README "Auto-push": within 4.8 s plus the push).
 */
import { Schema } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startGitServer, workingCopy } from "../test/support/GitServer.js"
import { startServiceProcess } from "../test/support/ServiceProcess.js"

const OUTAGE_MS = Number(process.env.BENCH_OUTAGE_SECONDS ?? "30") * 1_000
const WRITE_MS = Number(process.env.BENCH_WRITE_MS ?? "250")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const SyncStatus = Schema.parseJson(Schema.Struct({ pendingCommits: Schema.Number }))

const git = await startGitServer()
const base = await mkdtemp(join(tmpdir(), "lab-bench-recovery-"))

const measure = async (name: string, root: string | undefined) => {
  const repo = await git.createRepo(`recovery-${name.replace(/\W+/g, "-")}`)
  const wc = await workingCopy(repo)
  await writeFile(join(wc.dir, "README.md"), "# recovery\n")
  await wc.commitAndPush("first")
  await wc.remove()
  const dataDir = join(base, name.replace(/\W+/g, "-"))
  const adminKey = `bench_admin_${randomBytes(18).toString("hex")}`
  const service = await startServiceProcess({ dataDir, adminKey, masterKey: randomBytes(32).toString("hex"), root }, 90_000)
  const call = (method: string, path: string, json?: unknown) => service.request(method, path, { token: adminKey, json })
  try {
    const expectStatus = async (answer: Promise<Response>, status: number) => {
      const response = await answer
      if (response.status !== status) throw new Error(`${name}: expected ${status}, got ${response.status}: ${await response.text()}`)
    }
    await expectStatus(call("POST", "/api/v1/labs", { slug: "recovery", name: "Recovery", plan: "team" }), 201)
    await expectStatus(call("PATCH", "/api/v1/sync", { labId: "recovery", repo, autoPushOnEdit: true }), 200)
    await expectStatus(call("POST", "/api/v1/sync", { labId: "recovery" }), 200)

    git.failWith(503, Number.POSITIVE_INFINITY)
    const before = git.requests().length
    const start = Date.now()
    let writes = 0
    while (Date.now() - start < OUTAGE_MS) {
      await expectStatus(call("POST", "/api/v1/files", { labId: "recovery", path: `/notes/n${writes}.md`, content: `note ${writes}\n` }), 201)
      writes++
      await sleep(WRITE_MS)
    }
    const during = git.requests().length - before
    git.failWith(503, 0)
    const up = Date.now()
    for (;;) {
      const status = Schema.decodeUnknownSync(SyncStatus)(await (await call("GET", "/api/v1/sync?labId=recovery")).text())
      if (status.pendingCommits === 0) break
      if (Date.now() - up > 600_000) throw new Error(`${name}: still pending 10 min after the host came back`)
      await sleep(100)
    }
    const recovery = (Date.now() - up) / 1_000
    console.log(
      `${name.padEnd(22)} outage ${OUTAGE_MS / 1_000} s, ${String(writes).padStart(4)} writes: ` +
        `${String(during).padStart(4)} requests to the host while down; all landed ${recovery.toFixed(1)} s after it came back`
    )
  } finally {
    await service.stop("SIGTERM")
  }
}

try {
  const reference = process.env.BENCH_REFERENCE_ROOT
  if (reference !== undefined) await measure("reference", reference)
  await measure("this checkout", undefined)
} finally {
  await git.close()
  await rm(base, { recursive: true, force: true })
}
