/**
 * Exactly one commit per acknowledged write, whatever the instant the service dies: the service runs as its own
 * process against a real git server whose hook holds the push at a chosen point (the pack received but the branch
 * not yet moved, or the branch moved but the answer not yet sent); the process is SIGKILLed there and started
 * again. On PGlite on disk, and on PostgreSQL when DATABASE_URL is set.
 */
import { Redacted } from "effect"
import { access, chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { freshDatabase } from "../support/LabFixture.js"
import { startServiceProcess, type ServiceProcess } from "../support/ServiceProcess.js"
import { bareGit, fixedKeys, put, sleep, until, userOf } from "../support/SyncSupport.js"

const SERVICE_EMAIL = "lab-service@users.noreply.local"

let git: GitServer
const temp: Array<string> = []
const cleanups: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  git = await startGitServer()
}, 60_000)
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  await git.close()
  for (const dir of temp) await rm(dir, { recursive: true, force: true })
})

const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temp.push(dir)
  return dir
}

const exists = (path: string) => access(path).then(() => true, () => false)

/**
 * A hook that marks the moment it runs, then holds the push until released. Released, a pre-receive hook refuses
 * the push (it died with the service: the branch never moves); a post-receive hook lets it end (the branch moved).
 */
const holdingHook = async (repoDir: string, hook: "pre-receive" | "post-receive", dir: string) => {
  const reached = join(dir, `${hook}.reached`)
  const release = join(dir, `${hook}.release`)
  const path = join(repoDir, "hooks", hook)
  await writeFile(path, `#!/bin/sh\ncat >/dev/null\ntouch '${reached}'\nwhile [ ! -e '${release}' ]; do sleep 0.05; done\nexit ${hook === "pre-receive" ? 1 : 0}\n`)
  await chmod(path, 0o755)
  return {
    reached: () => exists(reached),
    release: async () => {
      await writeFile(release, "")
      await rm(path)
    }
  }
}

/** The operations of the issue: X.md five times, p0…p9 once, X.md again, p3 deleted (17 in all). */
const OPERATIONS: ReadonlyArray<{ readonly path: string; readonly content: string | null }> = [
  ...[1, 2, 3, 4, 5].map((v) => ({ path: "X.md", content: `x v${v}\n` })),
  ...Array.from({ length: 10 }, (_, i) => ({ path: `p${i}.md`, content: `p${i}\n` })),
  { path: "X.md", content: "x final\n" },
  { path: "p3.md", content: null }
]

const crashAt = (hook: "pre-receive" | "post-receive", databaseUrl: string | undefined) => async () => {
  const name = `crash-${hook}-${databaseUrl === undefined ? "pglite" : "pg"}`
  const url = await git.createRepo(name)
  const bare = bareGit(git.root, name)
  const wc = await workingCopy(url)
  cleanups.push(() => wc.remove())
  await put(wc.dir, "README.md", "hello\n")
  await wc.commitAndPush("first")

  const keys = fixedKeys()
  const dataDir = await tempDir("lab-crash-")
  const settings = { dataDir, adminKey: keys.adminKey, masterKey: keys.masterKey, databaseUrl }
  const track = (service: ServiceProcess) => {
    cleanups.push(() => service.stop("SIGKILL"))
    return service
  }

  // the host is down while the 17 operations are acknowledged
  const first = track(await startServiceProcess(settings))
  const user = userOf(first, keys.adminKey)
  const labId = await user.createLab(name)
  await user.link(labId, url, true)
  git.failWith(503, Number.POSITIVE_INFINITY)
  const written = new Set<string>()
  for (const op of OPERATIONS) {
    if (op.content === null) await user.removeOk(labId, `/${op.path}`)
    else if (written.has(op.path)) await user.updateOk(labId, `/${op.path}`, op.content)
    else await user.writeOk(labId, `/${op.path}`, op.content)
    written.add(op.path)
  }
  expect((await user.status(labId)).pendingCommits).toBe(OPERATIONS.length)
  await first.stop("SIGKILL")

  // the host is back; the restarted service pushes at once and is killed while the hook holds the push
  const hold = await holdingHook(join(git.root, `${name}.git`), hook, dataDir)
  git.failWith(0, 0)
  const second = track(await startServiceProcess(settings))
  await until(async () => ((await hold.reached()) ? true : undefined), `the ${hook} hook`, 30_000)
  expect(await second.stop("SIGKILL")).toBeNull()
  await hold.release()
  // the held git process ends on its own: the branch moves, or not, as the hook point says
  await sleep(300)

  const third = track(await startServiceProcess(settings))
  const after = userOf(third, keys.adminKey)
  const status = await after.pushed(labId, 30_000)
  expect(status.lastError).toBeNull()
  const log = (await bare("log", "--format=%ce|%s", "main")).split("\n")
  const service = log.filter((line) => line.startsWith(`${SERVICE_EMAIL}|`)).map((line) => line.split("|")[1]).reverse()
  expect(service).toEqual(OPERATIONS.map((op) => `${op.content === null ? "Delete" : "Update"} ${op.path}`))
  expect(await bare("show", "main:X.md")).toBe("x final")
  await expect(bare("show", "main:p3.md")).rejects.toThrow()
  expect((await after.read(labId, "/X.md"))?.content).toBe("x final\n")
  await third.stop("SIGTERM")
}

const DATABASES: ReadonlyArray<readonly [string, string | undefined]> = [
  ["PGlite", undefined],
  ...(process.env.DATABASE_URL ? [["PostgreSQL", process.env.DATABASE_URL] as const] : [])
]

describe.each(DATABASES)("a crash during a push (%s)", (_db, baseUrl) => {
  const database = async () => {
    if (baseUrl === undefined) return undefined
    const fresh = await freshDatabase(baseUrl)
    cleanups.push(fresh.drop)
    const db = fresh.settings?.database
    return db?.kind === "postgresql" ? Redacted.value(db.url) : undefined
  }

  it("SIGKILL after the pack is sent, and the branch never moves: each operation is committed once", async () => {
    await crashAt("pre-receive", await database())()
  }, 180_000)

  it("SIGKILL the moment the branch moves, before the answer: each operation is committed once", async () => {
    await crashAt("post-receive", await database())()
  }, 180_000)
})
