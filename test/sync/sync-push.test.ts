/**
 * Auto-push against a real git server: one commit per write, the service's own
 * pushes not coming back, optimistic concurrency, pushes racing outside pushes,
 * a host that is down, and a restart with commits still pending.
 */
import { Redacted } from "effect"
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { File } from "../../src/files/File.js"
import { data, expectError } from "../support/http.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { bareGit, deliver, fixedKeys, pushDelivery, put, SETTLE_MS, sleep, until, userOf, webhookAnswer, type User } from "../support/SyncSupport.js"
import { diskGit } from "../support/DiskGit.js"

const SERVICE = "Lab Service <lab-service@users.noreply.local>"

let git: GitServer
let server: TestServer
let user: User
const temp: Array<string> = []
const closers: Array<() => Promise<void>> = []

const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temp.push(dir)
  return dir
}

beforeAll(async () => {
  git = await startGitServer()
  closers.push(() => git.close())
  server = await startTestServer({ git: diskGit(await tempDir("lab-sync-push-"), 10_000) })
  closers.push(() => server.close())
  user = userOf(server, server.adminKey)
}, 120_000)
afterAll(async () => {
  for (const close of closers.reverse()) await close()
  for (const dir of temp) await rm(dir, { recursive: true, force: true })
})

/** A repository with a first commit on `gitServer`, and a lab of `as` linked to `linkUrl` (default: the repository). */
const linkedLab = async (
  slug: string,
  name: string,
  options: { readonly gitServer?: GitServer; readonly as?: User; readonly linkUrl?: (url: string) => string } = {}
) => {
  const gitServer = options.gitServer ?? git
  const as = options.as ?? user
  const url = await gitServer.createRepo(name)
  const wc = await workingCopy(url)
  await put(wc.dir, "README.md", "hello\n")
  const c0 = await wc.commitAndPush("first")
  const labId = await as.createLab(slug)
  const linked = options.linkUrl ? options.linkUrl(url) : url
  await as.link(labId, linked, true)
  await as.syncedTo(labId, c0)
  return { url: linked, wc, labId, c0, bare: bareGit(gitServer.root, name) }
}

/** `git log` of the remote branch as `<committer> | <subject>` lines, newest first (the service commits every write). */
const log = (git: (...args: ReadonlyArray<string>) => Promise<string>, ref: string, count: number) =>
  git("log", `-${count}`, "--format=%cn <%ce> | %s", ref).then((s) => s.split("\n"))

/**
 * A loopback proxy in front of the git server that can run an outside push at
 * an exact moment of the service's own push: when it asks for the remote's
 * refs, or when it sends its pack.
 */
const startRaceProxy = async (target: string) => {
  let armed: { readonly at: "refs" | "pack"; readonly run: () => Promise<void> } | undefined
  let packs = 0
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      void (async () => {
        const url = req.url ?? "/"
        const isPack = req.method === "POST" && url.endsWith("/git-receive-pack")
        const isRefs = req.method === "GET" && url.includes("service=git-receive-pack")
        if (isPack) packs++
        const hook = armed
        if (hook && ((hook.at === "pack" && isPack) || (hook.at === "refs" && isRefs))) {
          armed = undefined
          await hook.run()
        }
        const body = Buffer.concat(chunks)
        const headers = { ...req.headers, host: new URL(target).host, "content-length": String(body.byteLength) }
        const upstream = httpRequest(`${target}${url}`, { method: req.method, headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        })
        upstream.on("error", () => res.writeHead(502).end())
        upstream.end(body)
      })()
    })
  }
  const proxy: Server = createServer(handle)
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const address = proxy.address()
  if (address === null || typeof address === "string") throw new Error("proxy has no TCP address")
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    /** Run `f` once, at the service's next push (before the proxy forwards that request). */
    arm: (at: "refs" | "pack", f: () => Promise<void>) => {
      armed = { at, run: f }
    },
    isArmed: () => armed !== undefined,
    packs: () => packs,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections()
        proxy.close(() => resolve())
      })
  }
}

describe("auto-push against a real git server", { timeout: 90_000 }, () => {
  it("lands each write and delete as its own commit, and does not pull its own pushes back", async () => {
    const { url, wc, labId, c0, bare } = await linkedLab("push", "acme/push")
    const secret = (await user.secret(labId)).secret ?? ""

    const created = await user.writeOk(labId, "/notes/new.md", "one\n", 201)
    const updated = await user.updateOk(labId, "/notes/new.md", "two\n")
    expect(updated.sha).not.toBe(created.sha)
    await user.removeOk(labId, "/notes/new.md")
    const pushedStatus = await user.pushed(labId)
    expect(pushedStatus.lastError).toBeNull()

    await wc.pull()
    expect(await log(wc.git, "HEAD", 4)).toEqual([
      `${SERVICE} | Delete notes/new.md`,
      `${SERVICE} | Update notes/new.md`,
      `${SERVICE} | Update notes/new.md`,
      "Outside Author <outside@example.com> | first"
    ])
    // each write is authored by the credential that made it (here the operator's key), the service committing it
    expect(await wc.git("log", "-3", "--format=%an <%ae>")).toBe(Array(3).fill("instance operator <admin@users.noreply.local>").join("\n"))
    expect(await wc.git("rev-parse", "HEAD~3")).toBe(c0)
    expect(await wc.git("show", "HEAD~2:notes/new.md")).toBe("one")
    expect(await wc.git("rev-parse", "HEAD~2:notes/new.md")).toBe(created.sha)
    expect(await wc.git("show", "HEAD~1:notes/new.md")).toBe("two")
    expect(await wc.git("ls-tree", "-r", "--name-only", "HEAD")).toBe("README.md")
    const head = await wc.git("rev-parse", "HEAD")
    expect(pushedStatus.lastSyncSha).toBe(head)

    // a file kept, so "no new version" can be checked on it
    const kept = await user.writeOk(labId, "/notes/kept.md", "kept\n", 201)
    const afterKept = await user.pushed(labId)
    const keptHead = await bare("rev-parse", "main")
    expect(afterKept.lastSyncSha).toBe(keptHead)
    expect(await bare("log", "-1", "--format=%s", "main")).toBe("Update notes/kept.md")

    // the webhook for the service's own pushes: a pull is queued, and finds nothing
    const entriesBefore = await user.syncEntries(labId)
    const filesBefore = await user.files(labId)
    const hook = await webhookAnswer(
      await deliver(server, "github", pushDelivery("github", { url, fullName: "acme/push", branch: "main", before: head, after: keptHead }, secret))
    )
    expect(hook.status).toBe(202)
    await until(async () => {
      const s = await user.status(labId)
      return (s.lastSyncAt ?? 0) > (afterKept.lastSyncAt ?? 0) ? s : undefined
    }, "the pull after the webhook")
    expect(await user.files(labId)).toEqual(filesBefore)
    // once its write has landed in the repository, the file is a git file like any other
    expect(await user.read(labId, "/notes/kept.md")).toEqual({ ...kept, fromGit: true })
    expect(await user.syncEntries(labId)).toEqual(entriesBefore)
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha: keptHead })
    expect(await bare("rev-parse", "main")).toBe(keptHead)
  })

  it("a pushed file is a git file: git deleting it (or making it binary) removes it; a file that never reached git stays", async () => {
    const { labId, bare, wc } = await linkedLab("git-files", "acme/git-files")
    await user.writeOk(labId, "/pushed.md", "pushed\n", 201)
    await user.writeOk(labId, "/turns-binary.md", "text for now\n", 201)
    await user.pushed(labId)
    expect((await user.read(labId, "/pushed.md"))?.fromGit).toBe(true)
    expect(await bare("show", "main:pushed.md")).toBe("pushed")
    // a file written while auto-push is off never reaches git
    await user.link(labId, (await user.status(labId)).repo, false)
    await user.writeOk(labId, "/local-only.md", "mine\n", 201)

    await wc.git("pull", "--quiet", "origin", "main")
    await rm(join(wc.dir, "pushed.md"))
    await put(wc.dir, "turns-binary.md", Uint8Array.from([0, 1, 2, 3]))
    const c1 = await wc.commitAndPush("delete one, make one binary")
    expect(await user.syncNow(labId)).toMatchObject({ removed: 2, skipped: 1, sha: c1 })
    expect(await user.paths(labId)).toEqual(expect.arrayContaining(["/local-only.md"]))
    expect(await user.read(labId, "/pushed.md")).toBeUndefined()
    expect(await user.read(labId, "/turns-binary.md")).toBeUndefined()
  })

  it("refuses a write or delete with a stale sha (409) and writes nothing", async () => {
    const { labId, bare } = await linkedLab("stale", "acme/stale")
    const v1 = await user.writeOk(labId, "/notes/c.md", "v1\n", 201)
    await user.pushed(labId)
    const v2 = await data(await user.update(labId, "/notes/c.md", "v2\n", v1.sha), File)
    expect(v2.content).toBe("v2\n")
    const status = await user.pushed(labId)
    const head = await bare("rev-parse", "main")
    expect(await bare("show", "main:notes/c.md")).toBe("v2")

    await expectError(await user.update(labId, "/notes/c.md", "v3\n", v1.sha), 409, "conflict")
    await expectError(await user.write(labId, "/notes/c.md", "v3\n", v1.sha), 409, "conflict")
    await expectError(await user.remove(labId, "/notes/c.md", v1.sha), 409, "conflict")
    await expectError(await user.write(labId, "/notes/absent.md", "x\n", v1.sha), 409, "conflict")
    expect((await user.status(labId)).pendingCommits).toBe(0)
    await sleep(SETTLE_MS)

    const file = await user.read(labId, "/notes/c.md")
    expect(file?.content).toBe("v2\n")
    expect(await user.read(labId, "/notes/absent.md")).toBeUndefined()
    expect(await bare("rev-parse", "main")).toBe(head)
    expect((await user.status(labId)).lastSyncSha).toBe(status.lastSyncSha)

    // with the current sha the same write goes through and lands
    expect((await data(await user.update(labId, "/notes/c.md", "v3\n", v2.sha), File)).content).toBe("v3\n")
    await user.pushed(labId)
    expect(await bare("show", "main:notes/c.md")).toBe("v3")
  })

  it("commits on top of an outside push it has not pulled yet, keeping both changes", async () => {
    const { wc, labId, c0, bare } = await linkedLab("outside", "acme/outside")
    // an outside push the service hears nothing about
    await put(wc.dir, "outside.md", "from outside\n")
    await put(wc.dir, "conflict.md", "outside version\n")
    const outside = await wc.commitAndPush("outside change")
    expect((await user.status(labId)).lastSyncSha).toBe(c0)

    await user.writeOk(labId, "/notes/mine.md", "mine\n", 201)
    await user.writeOk(labId, "/conflict.md", "api version\n", 201)
    await user.pushed(labId)

    expect(await log(bare, "main", 4)).toEqual([
      `${SERVICE} | Update conflict.md`,
      `${SERVICE} | Update notes/mine.md`,
      "Outside Author <outside@example.com> | outside change",
      "Outside Author <outside@example.com> | first"
    ])
    expect(await bare("rev-parse", "main~2")).toBe(outside)
    expect(await bare("show", "main:outside.md")).toBe("from outside")
    expect(await bare("show", "main:notes/mine.md")).toBe("mine")
    // the write waiting in the outbox wins; the outside version stays in history
    expect(await bare("show", "main:conflict.md")).toBe("api version")
    expect(await bare("show", "main~2:conflict.md")).toBe("outside version")

    expect(await user.paths(labId)).toEqual(["/README.md", "/conflict.md", "/notes/mine.md", "/outside.md"])
    expect((await user.read(labId, "/outside.md"))?.content).toBe("from outside\n")
    expect((await user.read(labId, "/conflict.md"))?.content).toBe("api version\n")
    expect((await user.status(labId)).lastSyncSha).toBe(await bare("rev-parse", "main"))
  })

  it("a write of the content the lab shows wins over an outside push the lab has not pulled yet", async () => {
    const { wc, labId, bare } = await linkedLab("same-content", "acme/same-content")
    await user.writeOk(labId, "/x.md", "v1\n", 201)
    await user.pushed(labId)
    await wc.pull()
    await put(wc.dir, "x.md", "outside\n")
    await wc.commitAndPush("outside change")
    // the lab still shows v1; the user writes v1 again: acknowledged, so it is the newest word on the file
    await user.updateOk(labId, "/x.md", "v1\n")
    await user.pushed(labId)
    expect(await bare("show", "main:x.md")).toBe("v1")
    expect(await log(bare, "main", 1)).toEqual([`${SERVICE} | Update x.md`])
    await user.syncNow(labId)
    expect((await user.read(labId, "/x.md"))?.content).toBe("v1\n")
  })

  for (const at of ["refs", "pack"] as const) {
    it(`retries a push rejected because the remote moved between fetch and push (outside push at ${at})`, async () => {
      const proxy = await startRaceProxy(git.baseUrl)
      closers.push(proxy.close)
      const { wc, labId, bare } = await linkedLab(`race-${at}`, `acme/race-${at}`, { linkUrl: (url) => url.replace(git.baseUrl, proxy.baseUrl) })
      let outside = ""
      proxy.arm(at, async () => {
        await put(wc.dir, "outside.md", "pushed during the service's push\n")
        outside = await wc.commitAndPush("outside, mid-push")
      })

      await user.writeOk(labId, "/notes/mine.md", "mine\n", 201)
      let sawError = false
      await until(async () => {
        const s = await user.status(labId)
        if (s.lastError !== null) sawError = true
        return s.pendingCommits === 0 ? s : undefined
      }, "the push to land", 30_000)
      expect(proxy.isArmed()).toBe(false)
      expect(proxy.packs()).toBe(at === "pack" ? 2 : 1) // a refused pack, then the one that landed

      expect(await log(bare, "main", 3)).toEqual([
        `${SERVICE} | Update notes/mine.md`,
        "Outside Author <outside@example.com> | outside, mid-push",
        "Outside Author <outside@example.com> | first"
      ])
      expect(await bare("rev-parse", "main~1")).toBe(outside)
      expect(await user.paths(labId)).toEqual(["/README.md", "/notes/mine.md", "/outside.md"])
      expect((await user.read(labId, "/outside.md"))?.content).toBe("pushed during the service's push\n")
      // a concurrent push is retried at once, not reported as a failure
      expect(sawError).toBe(false)
    })
  }

  it("pushes a root commit to an empty repository", async () => {
    const url = await git.createRepo("acme/empty")
    const labId = await user.createLab("empty")
    await user.link(labId, url, true)
    await until(async () => ((await user.status(labId)).lastSyncAt !== null ? true : undefined), "the first pull")
    await user.writeOk(labId, "/first.md", "first\n", 201)
    await user.pushed(labId)
    const bare = bareGit(git.root, "acme/empty")
    expect(await log(bare, "main", 5)).toEqual([`${SERVICE} | Update first.md`])
    expect(await bare("show", "main:first.md")).toBe("first")
  })
})

describe("auto-push when the git host fails", { timeout: 90_000 }, () => {
  it("keeps acknowledged writes while the host answers 503, and pushes them when it recovers", { timeout: 90_000 }, async () => {
    const down = await startGitServer()
    closers.push(() => down.close())
    const { labId, bare, c0 } = await linkedLab("outage", "acme/outage", { gitServer: down })

    down.failWith(503, Number.POSITIVE_INFINITY)
    await user.writeOk(labId, "/notes/a.md", "a1\n", 201)
    await user.updateOk(labId, "/notes/a.md", "a2\n")
    await user.writeOk(labId, "/notes/b.md", "b\n", 201)
    await user.removeOk(labId, "/README.md")
    const failing = await until(async () => {
      const s = await user.status(labId)
      return s.lastError !== null && s.pendingCommits === 4 ? s : undefined
    }, "the failure to show in the sync status")
    expect(failing.lastError?.message).toMatch(/503/)
    expect(failing.lastError?.at).toBeGreaterThan(0)
    // acknowledged: readable now, not in git yet
    expect((await user.read(labId, "/notes/a.md"))?.content).toBe("a2\n")
    expect(await user.paths(labId)).toEqual(["/notes/a.md", "/notes/b.md"])
    expect(await bare("rev-parse", "main")).toBe(c0)

    down.failWith(0, 0)
    const recovered = await user.pushed(labId, 60_000)
    expect(recovered.lastError).toBeNull()
    expect(await log(bare, "main", 5)).toEqual([
      `${SERVICE} | Delete README.md`,
      `${SERVICE} | Update notes/b.md`,
      `${SERVICE} | Update notes/a.md`,
      `${SERVICE} | Update notes/a.md`,
      "Outside Author <outside@example.com> | first"
    ])
    expect(await bare("show", "main~3:notes/a.md")).toBe("a1")
    expect(await bare("show", "main:notes/a.md")).toBe("a2")
    expect(await bare("ls-tree", "-r", "--name-only", "main")).toBe("notes/a.md\nnotes/b.md")
    expect(recovered.lastSyncSha).toBe(await bare("rev-parse", "main"))
  })

  it("pushes commits still pending across a restart, and keeps working when a restart lost the git data", { timeout: 150_000 }, async () => {
    const down = await startGitServer()
    closers.push(() => down.close())
    const keys = fixedKeys()
    const common = {
      database: { kind: "pglite" as const, dataDir: await tempDir("lab-sync-restart-db-") },
      adminKey: Redacted.make(keys.adminKey),
      masterKey: Redacted.make(keys.masterKey)
    }
    const gitDisk = diskGit(await tempDir("lab-sync-restart-git-"), 10_000)
    const open = new Set<TestServer>()
    closers.push(async () => {
      for (const s of open) await s.close()
    })
    const start = async (git: typeof gitDisk) => {
      const s = await startTestServer({ ...common, git })
      open.add(s)
      return { server: s, user: userOf(s, keys.adminKey) }
    }
    const stop = async (s: TestServer) => {
      open.delete(s)
      await s.close()
    }

    const first = await start(gitDisk)
    const { wc, labId, bare, c0 } = await linkedLab("restart", "acme/restart", { gitServer: down, as: first.user })
    down.failWith(503, Number.POSITIVE_INFINITY)
    await first.user.writeOk(labId, "/notes/restart.md", "written before the restart\n", 201)
    await first.user.removeOk(labId, "/README.md")
    await until(async () => {
      const s = await first.user.status(labId)
      return s.lastError !== null && s.pendingCommits === 2 ? s : undefined
    }, "the failure to show in the sync status")
    // a forced pull says what the host said
    expect(await expectError(await first.user.call("POST", "/api/v1/sync", { labId }), 502, "bad_gateway")).toMatch(/503/)
    await stop(first.server)

    // the same database and git directory
    const second = await start(gitDisk)
    // the acknowledged writes survived the restart
    expect((await second.user.status(labId)).pendingCommits).toBe(2)
    expect((await second.user.read(labId, "/notes/restart.md"))?.content).toBe("written before the restart\n")
    expect(await bare("rev-parse", "main")).toBe(c0)

    down.failWith(0, 0)
    const landed = await second.user.pushed(labId, 60_000)
    expect(landed.lastError).toBeNull()
    expect(await log(bare, "main", 3)).toEqual([
      `${SERVICE} | Delete README.md`,
      `${SERVICE} | Update notes/restart.md`,
      "Outside Author <outside@example.com> | first"
    ])
    expect(await bare("show", "main:notes/restart.md")).toBe("written before the restart")
    expect(landed.lastSyncSha).toBe(await bare("rev-parse", "main"))
    expect(await second.user.paths(labId)).toEqual(["/notes/restart.md"])
    await stop(second.server)

    // an outside push while the service is down, then a start on the same database but a fresh, empty git
    // directory (DATA_DIR lost, DATABASE_URL kept): the last synced commit is not there to diff from
    await wc.pull()
    await put(wc.dir, "outside.md", "pushed while the service was down\n")
    const outside = await wc.commitAndPush("outside, while down")
    const third = await start({ ...gitDisk, root: await tempDir("lab-sync-restart-git2-") })
    await third.user.syncedTo(labId, outside)
    expect(await third.user.paths(labId)).toEqual(["/notes/restart.md", "/outside.md"])
    expect((await third.user.status(labId)).lastError).toBeNull()

    // and a write still lands, on top of yet another outside push
    await put(wc.dir, "outside2.md", "another\n")
    const outside2 = await wc.commitAndPush("outside again")
    await third.user.writeOk(labId, "/notes/after.md", "after\n", 201)
    const again = await third.user.pushed(labId)
    expect(again.lastError).toBeNull()
    expect(await log(bare, "main", 2)).toEqual([`${SERVICE} | Update notes/after.md`, "Outside Author <outside@example.com> | outside again"])
    expect(await bare("rev-parse", "main~1")).toBe(outside2)
    expect(await third.user.paths(labId)).toEqual(["/notes/after.md", "/notes/restart.md", "/outside.md", "/outside2.md"])
  })
})
