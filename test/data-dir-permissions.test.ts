/**
 * DATA_DIR holds the operator's keys, the embedded database and the labs'
 * repositories: the deployment (a real `src/main.ts` process, embedded PGlite,
 * git on disk) creates it and everything in it readable by its user only, and
 * tightens an existing DATA_DIR that others could read.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { chmod, lstat, readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { type GitServer, workingCopy } from "./support/GitServer.js"
import { useGitServer } from "./support/SyncServer.js"
import { freePort } from "./support/FreePort.js"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Every path under `dir` (itself included) whose mode lets group or others in, with its mode. */
const openToOthers = async (dir: string): Promise<Array<string>> => {
  const found: Array<string> = []
  const visit = async (path: string) => {
    const stats = await lstat(path)
    if (!stats.isSymbolicLink() && (stats.mode & 0o077) !== 0) found.push(`${path.slice(dir.length) || "/"} ${(stats.mode & 0o777).toString(8)}`)
    if (stats.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name))
  }
  await visit(dir)
  return found
}

/** Start the deployment on DATA_DIR and wait until it answers. */
const startService = async (dataDir: string, port: number): Promise<{ child: ChildProcess; output: () => string }> => {
  // a clean environment, so a developer's or CI's DATABASE_URL etc. play no part
  const child = spawn(join(root, "node_modules/.bin/tsx"), ["src/main.ts"], {
    cwd: root,
    // the test git server is on loopback, which git traffic reaches only when allowed
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, GIT_ALLOWED_HOSTS: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}): ${output}`)
    const up = await fetch(`http://127.0.0.1:${port}/api/v1/status`).then((r) => r.ok, () => false)
    if (up) return { child, output: () => output }
    if (Date.now() > deadline) throw new Error(`the service did not start: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("close", () => resolve())
    child.kill("SIGTERM")
  })

let git: GitServer
let base: string
useGitServer("lab-perms-", (started, root) => {
  git = started
  base = root
})

describe("DATA_DIR permissions", () => {
  it("a fresh DATA_DIR, its database, keys and git data are the service user's alone", { timeout: 180_000 }, async () => {
    const dataDir = join(base, "fresh", "data") // neither exists yet
    const repo = await git.createRepo("perms")
    const wc = await workingCopy(repo)
    await writeFile(join(wc.dir, "notes.md"), "# notes\n")
    await wc.commitAndPush("first")
    const port = await freePort()
    const { child } = await startService(dataDir, port)
    try {
      const admin = (await readFile(join(dataDir, "admin-key"), "utf8")).trim()
      const call = (method: string, path: string, json: unknown) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: JSON.stringify(json)
        })
      const lab = await call("POST", "/api/v1/labs", { slug: "perms", name: "Perms", plan: "team" })
      expect(lab.status).toBe(201)
      // linking pulls the repository into DATA_DIR/git
      expect((await call("PATCH", "/api/v1/sync", { labId: "perms", repo })).status).toBe(200)
      expect((await call("POST", "/api/v1/sync", { labId: "perms" })).status).toBe(200)
    } finally {
      await stop(child)
      await wc.remove()
    }
    const entries = await readdir(dataDir)
    expect(entries).toEqual(expect.arrayContaining(["admin-key", "master-key", "pglite", "git"]))
    expect(await openToOthers(dataDir)).toEqual([])
  })

  it("an existing DATA_DIR that others can read is made private at start", { timeout: 180_000 }, async () => {
    // the first test's DATA_DIR, opened up as an earlier version (or the operator) may have left it
    const dataDir = join(base, "fresh", "data")
    await chmod(dataDir, 0o755)
    const { child } = await startService(dataDir, await freePort())
    await stop(child)
    expect((await lstat(dataDir)).mode & 0o777).toBe(0o700)
  })
})
