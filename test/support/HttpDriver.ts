import { Effect, Layer, Redacted } from "effect"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as GitDisk from "../../layers/git/GitDisk.js"
import { Git } from "../../src/sync/Git.js"
import { deliver, put, pushDelivery, until, userOf } from "./SyncSupport.js"
import { LOOPBACK } from "./DiskGit.js"
import { startGitServer, workingCopy } from "./GitServer.js"
import { freshDatabase } from "./LabFixture.js"
import { gitControls } from "./ModelGit.js"
import { type Driver, type Observed, SyncModel } from "./SyncModel.js"
import { INITIAL_REMOTE, LOCAL_ONLY } from "./SyncSteps.js"
import { operatorOf } from "./LabFixture.js"
import { startTestServer, type TestServer } from "./TestServer.js"

/**
 * The model-based test's driver against the running server over HTTP, on a real git host (git http-backend on
 * loopback) and the disk git layer. The lab's worker pushes and pulls on its own, as in production, so the model is
 * tolerant (it knows which contents each path may end with). Each write uses its own API key: its commit names it.
 * A restart stops the server and starts it again on the same database (PostgreSQL when DATABASE_URL is set, else
 * PGlite on disk) and git directory.
 */
export const httpSync = async () => {
  const host = await startGitServer()
  const gitRoot = await mkdtemp(join(tmpdir(), "lab-model-git-"))
  const dataDir = await mkdtemp(join(tmpdir(), "lab-model-db-"))
  const controls = gitControls()
  const git = Layer.effect(Git, Effect.map(Git, controls.wrap)).pipe(
    Layer.provide(GitDisk.layer({ root: gitRoot, timeoutMillis: 10_000, allowedHosts: LOOPBACK }))
  )
  const adminKey = `lsk_test_admin_${randomBytes(16).toString("hex")}`
  // PostgreSQL (a fresh schema) when DATABASE_URL is set, else PGlite on disk: both outlive a restart
  const postgres = await freshDatabase(process.env["DATABASE_URL"])
  const settings = {
    git: { kind: "layer" as const, layer: git },
    database: postgres.settings?.database ?? { kind: "pglite" as const, dataDir },
    adminKey: Redacted.make(adminKey),
    masterKey: Redacted.make(randomBytes(32).toString("hex"))
  }
  let server: TestServer = await startTestServer(settings)
  const admin = () => userOf(server, adminKey)
  let labs = 0

  const newLab = async (): Promise<{ readonly model: SyncModel; readonly driver: Driver }> => {
    const model = new SyncModel(false)
    const slug = `model-${++labs}-${randomBytes(3).toString("hex")}`
    const fullName = `acme/${slug}`
    const url = await host.createRepo(fullName)
    const wc = await workingCopy(url)
    // outside pushes go straight to the repository's directory, so a host made to fail fails only the service
    await wc.git("remote", "add", "disk", join(host.root, `${fullName}.git`))
    const labId = await admin().createLab(slug)
    for (const [path, content] of Object.entries(LOCAL_ONLY)) await admin().writeOk(labId, path, content, 201)

    const outside = async (edits: ReadonlyArray<readonly [string, Uint8Array | null]>) => {
      for (;;) {
        await wc.git("fetch", "--quiet", "disk").catch(() => "")
        await wc.git("reset", "--quiet", "--hard", "disk/main").catch(() => "")
        for (const [path, bytes] of edits) {
          if (bytes === null) await rm(join(wc.dir, path), { force: true })
          else await put(wc.dir, path, bytes)
        }
        await wc.git("add", "-A")
        await wc.git("commit", "--quiet", "--allow-empty", "-m", "outside change")
        const pushed = await wc.git("push", "--quiet", "disk", "HEAD:refs/heads/main").then(() => true, () => false)
        if (pushed) return wc.git("rev-parse", "HEAD")
      }
    }
    model.outsideCommits.push(await outside(Object.entries(INITIAL_REMOTE).map(([path, text]) => [path, Buffer.from(text)] as const)))
    await admin().link(labId, url, true)
    const { secret } = await admin().secret(labId)
    if (secret === undefined) throw new Error("no webhook secret")
    await until(async () => ((await admin().status(labId)).lastSyncSha !== null ? true : undefined), "the first pull")

    /** A key of its own for each write: the commit names it. */
    const writer = async () =>
      operatorOf(server, adminKey).createKey({ name: "model", scopes: [`lab:${slug}:rw`] })
    const forced = async (subPath: string | null) => {
      const response = await admin().call("POST", "/api/v1/sync", subPath === null ? { labId } : { labId, subPath })
      await response.body?.cancel()
      if (response.status !== 200 && response.status !== 502) throw new Error(`POST /sync answered ${response.status}`)
    }
    const settled = () => until(async () => ((await admin().status(labId)).pendingCommits === 0 ? true : undefined), "the outbox to drain", 30_000)

    const observe = async (): Promise<Observed> => {
      await wc.git("fetch", "--quiet", "disk")
      const remote = new Map<string, Uint8Array>()
      for (const line of (await wc.git("ls-tree", "-r", "disk/main")).split("\n").filter((l) => l !== "")) {
        const [meta = "", path = ""] = line.split("\t")
        const blob = meta.split(" ")[2] ?? ""
        remote.set(path, await blobBytes(wc.dir, blob))
      }
      const log = await wc.git("log", "--format=%H%x00%ce%x00%B%x01", "disk/main")
      const history = log.split("\x01").map((entry) => entry.replace(/^\n/, "")).filter((entry) => entry !== "").map((entry) => {
        const [commit = "", committerEmail = "", message = ""] = entry.split("\0")
        return { commit, committerEmail, message }
      })
      const lab = new Map<string, string>()
      for (const file of await admin().files(labId)) lab.set(file.path, (await admin().read(labId, file.path))?.content ?? "")
      const status = await admin().status(labId)
      return { remote, lab, history, pendingCommits: status.pendingCommits, lastError: status.lastError?.message ?? null }
    }

    const driver: Driver = {
      write: async (path, content) => {
        const key = await writer()
        const response = await server.request("POST", "/api/v1/files", { token: key.key, json: { labId, path, content } })
        await response.body?.cancel()
        if (response.status !== 200 && response.status !== 201) throw new Error(`POST /files ${path} answered ${response.status}`)
        return key.id
      },
      remove: async (path) => {
        const key = await writer()
        const response = await server.request("DELETE", `/api/v1/files?labId=${labId}&path=${encodeURIComponent(path)}`, { token: key.key })
        await response.body?.cancel()
        if (response.status === 404) return undefined
        if (response.status !== 200) throw new Error(`DELETE /files ${path} answered ${response.status}`)
        return key.id
      },
      outside,
      webhook: async () => {
        const head = await wc.git("rev-parse", "HEAD")
        const response = await deliver(server, "github", pushDelivery("github", { url, fullName, branch: "main", before: head, after: head }, secret))
        await response.body?.cancel()
        if (response.status !== 202) throw new Error(`the webhook answered ${response.status}`)
      },
      forcedSync: forced,
      drain: async () => {
        await settled().catch(() => undefined)
      },
      fault: async (fault) => {
        // down for as many requests as a fetch tries (a single 503 is retried within the fetch)
        if (fault === "down") host.failWith(503, 3)
        else controls.armPush(fault)
      },
      pausedPull: (during) => controls.pausedDuring("readBlob", () => forced(null), during),
      // the worker pushes on its own once writes wait: stop the next push, if one comes before the outbox is empty
      pausedPush: async (during) => {
        const pause = controls.pauseAt("push")
        await Promise.race([pause.reached, settled().catch(() => undefined)])
        await during()
        pause.release()
      },
      restart: async () => {
        await server.close()
        server = await startTestServer(settings)
      },
      landed: async () => new Set(),
      quiesce: async () => {
        controls.reset()
        host.failWith(503, 0)
        await settled()
        // a last pull; a job failed by a fault just before may still be waiting for its retry
        await until(async () => {
          const response = await admin().call("POST", "/api/v1/sync", { labId })
          await response.body?.cancel()
          return response.status === 200 ? true : undefined
        }, "a forced sync to succeed", 30_000, 200)
        await settled()
        return observe()
      }
    }
    return { model, driver }
  }

  const close = async () => {
    await server.close()
    await host.close()
    await rm(gitRoot, { recursive: true, force: true })
    await rm(dataDir, { recursive: true, force: true })
    await postgres.drop()
  }
  return { newLab, stats: controls.stats, close }
}

/** A blob's bytes, by id, from a working copy that has fetched it. */
const blobBytes = (dir: string, blob: string) =>
  new Promise<Uint8Array>((resolve, reject) =>
    execFile("git", ["cat-file", "blob", blob], { cwd: dir, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 }, (error, stdout) =>
      error ? reject(error) : resolve(new Uint8Array(stdout))
    )
  )
