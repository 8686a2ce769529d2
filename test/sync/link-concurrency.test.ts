/**
 * Link changes under concurrency on PostgreSQL: 16 PATCH /api/v1/sync at once, on one lab and on as many labs,
 * against a real git server. Each answer is true: 200, or an error that says what happened, and the lab ends linked
 * to one of the repositories asked for; a pool that is only busy is not called a lost connection. Runs when
 * DATABASE_URL is set (PGlite is one connection in the process: no pool to exhaust, no lock held on another).
 */
import { Effect, Schedule, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SyncStatus } from "../../src/sync/RepoLink.js"
import { json } from "../support/http.js"
import { diskGit } from "../support/DiskGit.js"
import { type GitServer, startGitServer } from "../support/GitServer.js"
import { freshDatabase } from "../support/LabFixture.js"
import { repoWith } from "../support/SyncServer.js"
import { type User, userOf } from "../support/SyncSupport.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

const DATABASE_URL = process.env["DATABASE_URL"]
const CONCURRENT = 16

let host: GitServer
let server: TestServer
let admin: User
let root: string
let drop: () => Promise<void> = async () => {}

describe.skipIf(DATABASE_URL === undefined)("16 concurrent link changes on PostgreSQL", { timeout: 180_000 }, () => {
  beforeAll(async () => {
    host = await startGitServer()
    root = await mkdtemp(join(tmpdir(), "lab-link-pool-"))
    const db = await freshDatabase(DATABASE_URL)
    drop = db.drop
    server = await startTestServer({ ...db.settings, git: diskGit(root, 10_000) })
    admin = userOf(server, server.adminKey)
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await drop()
    await host?.close()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  const repos = (prefix: string) =>
    Promise.all(Array.from({ length: CONCURRENT }, (_, i) => repoWith(host, `acme/${prefix}-${i}`, { [`r${i}.md`]: `${i}\n` })))

  /** The answers of the PATCHes, each 200 (with the link it set) or what else it said. */
  const patchAll = (bodies: ReadonlyArray<Record<string, unknown>>) =>
    Promise.all(
      bodies.map(async (body) => {
        const response = await admin.call("PATCH", "/api/v1/sync", body)
        return { status: response.status, body: await json(response) }
      })
    )

  it("a pool that stays busy is not a lost connection: 503 says so, and that nothing changed (true)", async () => {
    // first in the file: no lab is linked yet, so no git job of the service competes for the pool
    const [asked] = await repos("busy")
    const labId = await admin.createLab("link-pool-busy")
    // every connection of the service's pool (10) held by something else, each taken as soon as it is free
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    let holding = 0
    const held = server.sql((sql) =>
      Effect.scoped(
        Effect.zipRight(
          Effect.forEach(Array.from({ length: 10 }), () => Effect.option(Effect.tap(Effect.retry(sql.reserve, { schedule: Schedule.spaced("50 millis"), times: 600 }), () => Effect.sync(() => holding++))), {
            concurrency: "unbounded"
          }),
          Effect.promise(() => released)
        )
      )
    )
    try {
      const deadline = Date.now() + 60_000
      while (holding < 10 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(holding, "the test holds the whole pool").toBe(10)
      const response = await admin.call("PATCH", "/api/v1/sync", { labId, repo: asked?.url })
      const body = await json(response)
      expect(response.status, JSON.stringify(body)).toBe(503)
      expect(JSON.stringify(body), JSON.stringify(body)).toMatch(/the database is busy[^"]*; nothing was changed/)
      expect(response.headers.get("retry-after")).not.toBeNull()
    } finally {
      release()
      await held
    }
    // and nothing was: the lab is still unlinked
    expect((await admin.call("GET", `/api/v1/sync?labId=${labId}`)).status).toBe(404)
  })

  it("on one lab: every PATCH answers 200 and the lab ends linked to one of the repositories asked for", async () => {
    const asked = await repos("one")
    const labId = await admin.createLab("link-pool-one")
    const answers = await patchAll(asked.map((r) => ({ labId, repo: r.url })))
    expect(answers.map((a) => a.status), JSON.stringify(answers.filter((a) => a.status !== 200))).toEqual(answers.map(() => 200))
    const final = await admin.status(labId)
    expect(asked.map((r) => r.url)).toContain(final.repo)
    const head = asked.find((r) => r.url === final.repo)?.head ?? ""
    await admin.syncedTo(labId, head)
  })

  it("on 16 labs: every PATCH answers 200, each lab linked to its repository", async () => {
    const asked = await repos("many")
    const labs = await Promise.all(asked.map((_, i) => admin.createLab(`link-pool-many-${i}`)))
    const answers = await patchAll(asked.map((r, i) => ({ labId: labs[i], repo: r.url })))
    expect(answers.map((a) => a.status), JSON.stringify(answers.filter((a) => a.status !== 200))).toEqual(answers.map(() => 200))
    for (const [i, answer] of answers.entries()) expect(Schema.decodeUnknownSync(SyncStatus)(answer.body).repo).toBe(asked[i]?.url)
    for (const [i, labId] of labs.entries()) await admin.syncedTo(labId, asked[i]?.head ?? "")
  })

})
