/**
 * People pushing from their own machines are not locked out by a busy lab's auto-push: while the API writes 10 times
 * a second, a git user who pushes as git users do (git pull --rebase, git push, a short pause and again when
 * rejected), over a connection slower than the service's own (250 ms added to each request), gets through within a
 * few attempts, and every API write still lands as its own commit. Against a real git server (git http-backend); on
 * PGlite, or PostgreSQL when DATABASE_URL is set. A webhook of such a lab is pulled at once: only its pushes wait their turn.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { diskGit } from "../support/DiskGit.js"
import { type GitServer, startGitServer } from "../support/GitServer.js"
import { freshDatabase } from "../support/LabFixture.js"
import { linkedLab } from "../support/SyncServer.js"
import { bareGit, deliver, pushDelivery, put, sleep, type User, userOf, webhookAnswer } from "../support/SyncSupport.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { PUSH_BURST, PUSH_SPACING_MILLIS } from "../../src/sync/PushPacing.js"

const SERVICE_EMAIL = "lab-service@users.noreply.local"
/** API writes a second while the outside pushes run. */
const WRITES_PER_SECOND = 10
const OUTSIDE_PUSHES = 6
/** "A few": an outside push that needs more tries than this is locked out. */
const MAX_ATTEMPTS = 4

/** What the outside pusher's own connection adds to each request: a person's machine is further from the host. */
const OUTSIDE_LATENCY_MILLIS = 250

/** A loopback proxy in front of `target` that answers each request `delayMillis` late (the outside pusher's network). */
const startLatencyProxy = async (target: string, delayMillis: number) => {
  const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      setTimeout(() => {
        const body = Buffer.concat(chunks)
        const headers = { ...req.headers, host: new URL(target).host, "content-length": String(body.byteLength) }
        const upstream = httpRequest(`${target}${req.url ?? "/"}`, { method: req.method, headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        })
        upstream.on("error", () => res.writeHead(502).end())
        upstream.end(body)
      }, delayMillis)
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const address = proxy.address()
  if (address === null || typeof address === "string") throw new Error("proxy has no TCP address")
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections()
        proxy.close(() => resolve())
      })
  }
}

let git: GitServer
let server: TestServer
let user: User
let root: string
let dropDatabase = async () => {}

beforeAll(async () => {
  git = await startGitServer()
  root = await mkdtemp(join(tmpdir(), "lab-outside-push-"))
  const database = await freshDatabase(process.env["DATABASE_URL"])
  dropDatabase = database.drop
  server = await startTestServer({ ...database.settings, git: diskGit(root, 10_000) })
  user = userOf(server, server.adminKey)
}, 120_000)
afterAll(async () => {
  await server?.close()
  await git?.close()
  await dropDatabase()
  if (root !== undefined) await rm(root, { recursive: true, force: true })
})

describe("an outside pusher beside a busy lab", { timeout: 180_000 }, () => {
  it("gets each push through within a few attempts while the API writes 10 a second", async () => {
    const { wc, labId } = await linkedLab(git, user, { slug: "busy", name: "acme/busy", files: { "README.md": "hello\n" }, autoPushOnEdit: true })
    const bare = bareGit(git.root, "acme/busy")
    // the repository keeps a log of its branch's moves (a bare repository keeps none by default)
    await bare("config", "core.logAllRefUpdates", "always")
    const far = await startLatencyProxy(git.baseUrl, OUTSIDE_LATENCY_MILLIS)
    await wc.git("remote", "set-url", "origin", `${far.baseUrl}/acme/busy.git`)

    // the API: a write every 100 ms, on a clock (a slow answer does not slow the rate), until the pushes are done
    let writing = true
    let written = 0
    const writes: Array<Promise<unknown>> = []
    const writer = (async () => {
      const started = performance.now()
      while (writing) {
        const n = written++
        writes.push(user.writeOk(labId, `/notes/api-${n}.md`, `api write ${n}\n`, 201))
        await sleep(Math.max(0, started + (written * 1000) / WRITES_PER_SECOND - performance.now()))
      }
    })()

    // a git user: commit, then pull --rebase and push until the push is taken, pausing a moment after a refusal
    await sleep(1_000)
    const attempts: Array<number> = []
    for (let k = 0; k < OUTSIDE_PUSHES; k++) {
      await put(wc.dir, `outside/o${k}.md`, `outside ${k}\n`)
      await wc.git("add", "-A")
      await wc.git("commit", "--quiet", "-m", `outside ${k}`)
      let tries = 0
      for (;;) {
        tries++
        const ok = await wc
          .git("pull", "--quiet", "--rebase", "origin", "main")
          .then(() => wc.git("push", "--quiet", "origin", "HEAD:refs/heads/main"))
          .then(() => true, () => false)
        if (ok || tries > MAX_ATTEMPTS) break
        await sleep(200)
      }
      attempts.push(tries)
    }
    writing = false
    await far.close()
    await writer
    await Promise.all(writes)
    const pushedStatus = await user.pushed(labId, 60_000)

    // each outside push got through within a few attempts
    expect(attempts.filter((n) => n > MAX_ATTEMPTS), `attempts per outside push: ${attempts.join(", ")}`).toEqual([])
    // and the API writes were not held back: each is its own commit in the repository, as are the outside ones
    expect(written).toBeGreaterThan(30)
    expect(Number(await bare("rev-list", "--count", `--committer=${SERVICE_EMAIL}`, "main"))).toBe(written)
    expect(Number(await bare("rev-list", "--count", "--author=outside@example.com", "main"))).toBe(OUTSIDE_PUSHES + 1)
    // the branch was left alone most of the time: the service moved it at most once per PUSH_SPACING_MILLIS (an
    // outside push in between lets it push again at once, on top), but for a burst when writing starts and one
    // after a spell in which outside pushes kept winning
    const moves = (await bare("reflog", "show", "--date=unix", "--format=%ce %gd", "refs/heads/main"))
      .split("\n")
      .map((line) => ({ service: line.startsWith(`${SERVICE_EMAIL} `), at: Number(/@\{(\d+)\}/.exec(line)?.[1]) }))
      .reverse()
    const quick = moves.filter((move, i) => {
      const before = moves[i - 1]
      // the log counts whole seconds
      return move.service && before?.service === true && move.at - before.at < PUSH_SPACING_MILLIS / 1000 - 1
    })
    expect(quick.length, `${quick.length} of the service's ${moves.filter((m) => m.service).length} pushes came quickly after its previous one`).toBeLessThanOrEqual(2 * PUSH_BURST)
    expect(pushedStatus.lastError).toBeNull()
    await user.syncNow(labId)
    const paths = await user.paths(labId)
    for (let k = 0; k < OUTSIDE_PUSHES; k++) expect(paths).toContain(`/outside/o${k}.md`)
  })

  it("pulls a webhook's push at once while the lab waits for its push turn", async () => {
    const { url, wc, labId } = await linkedLab(git, user, { slug: "paced", name: "acme/paced", files: { "README.md": "hello\n" }, autoPushOnEdit: true })
    const bare = bareGit(git.root, "acme/paced")
    const secret = (await user.secret(labId)).secret ?? ""
    let writing = true
    let written = 0
    const writes: Array<Promise<unknown>> = []
    const writer = (async () => {
      const started = performance.now()
      while (writing) {
        const n = written++
        writes.push(user.writeOk(labId, `/notes/api-${n}.md`, `api write ${n}\n`, 201))
        await sleep(Math.max(0, started + (written * 1000) / WRITES_PER_SECOND - performance.now()))
      }
    })()
    const measure = async () => {
      // the burst is spent within the first seconds (its last push may still be on its way): the second move of the
      // branch after that is a paced one, and the next push waits a whole turn from it
      await sleep(1_500)
      let head = await bare("rev-parse", "main")
      for (let move = 0; move < 2; move++) {
        const before = head
        for (let i = 0; i < (2 * PUSH_SPACING_MILLIS) / 50 && head === before; i++) {
          await sleep(50)
          head = await bare("rev-parse", "main")
        }
        expect(head, "the service pushed again within two spacings").not.toBe(before)
      }
      const turnStarted = performance.now()

      // an outside push, and its webhook: the lab's push waits for its turn, its pull does not
      await put(wc.dir, "outside/now.md", "outside now\n")
      await wc.git("add", "-A")
      await wc.git("commit", "--quiet", "-m", "outside now")
      await wc.git("pull", "--quiet", "--rebase", "origin", "main")
      await wc.git("push", "--quiet", "origin", "HEAD:refs/heads/main")
      const after = await wc.git("rev-parse", "HEAD")
      const delivered = performance.now()
      const answer = await webhookAnswer(
        await deliver(server, "github", pushDelivery("github", { url, fullName: "acme/paced", branch: "main", before: await wc.git("rev-parse", "HEAD^"), after }, secret))
      )
      expect(answer.body.action).toBe("queued")
      let pulledAfter = Number.POSITIVE_INFINITY
      for (;;) {
        if ((await user.read(labId, "/outside/now.md")) !== undefined) {
          pulledAfter = performance.now() - delivered
          break
        }
        if (performance.now() - delivered > 2 * PUSH_SPACING_MILLIS) break
        await sleep(25)
      }
      // still within the turn the service's last push started: pacing held its next push meanwhile
      const pending = (await user.status(labId)).pendingCommits
      const inTurn = performance.now() - turnStarted
      return { pulledAfter, pending, inTurn }
    }
    // the writer stops however the measure ends: no write outlives the test's server
    const { pulledAfter, pending, inTurn } = await measure().finally(async () => {
      writing = false
      await writer
      await Promise.allSettled(writes)
    })
    await user.pushed(labId, 60_000)

    expect(pulledAfter, `pulled ${Math.round(pulledAfter)} ms after the webhook (push spacing ${PUSH_SPACING_MILLIS} ms)`).toBeLessThan(PUSH_SPACING_MILLIS / 4)
    if (inTurn < PUSH_SPACING_MILLIS - 500) expect(pending, "writes waiting for the lab's push turn").toBeGreaterThan(0)
    expect(Number(await bare("rev-list", "--count", `--committer=${SERVICE_EMAIL}`, "main"))).toBe(written)
  })
})
