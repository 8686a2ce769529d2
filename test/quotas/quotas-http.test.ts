/**
 * Per-lab quotas by plan, as a user meets them over HTTP: API keys, running
 * pods, stored bytes (files, synced files, backups), backups kept (403
 * quota_exceeded naming the quota, the use and the limit) and forced syncs
 * per minute (429 rate_limited with Retry-After). The server runs with small
 * team-plan quotas so each can be reached quickly.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKey, CreatedApiKey } from "../../src/auth/ApiKey.js"
import { Backup } from "../../src/backups/Backup.js"
import { File } from "../../src/files/File.js"
import { Lab } from "../../src/labs/Lab.js"
import { Pod } from "../../src/pods/Pod.js"
import { DEFAULT_QUOTAS } from "../../src/quotas/PlanQuotas.js"
import { countedNotRefused } from "../../src/quotas/RecordsQuota.js"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { type Fixture, startFixture, waitFor } from "../support/LabFixture.js"
import { data, expectError, json, page } from "../support/http.js"
import { roomInWindow } from "../support/RateWindows.js"
import { put, userOf } from "../support/SyncSupport.js"
import { diskGit } from "../support/DiskGit.js"

const TEAM = { apiKeys: 4, runningPods: 1, storedBytes: 8_000, backupsKept: 2, forcedSyncsPerMinute: 2, records: 40 }

let fx: Fixture
let git: GitServer
let gitRoot: string

beforeAll(async () => {
  git = await startGitServer()
  gitRoot = await mkdtemp(join(tmpdir(), "lab-quotas-"))
  fx = await startFixture("quota", {
    quotas: { ...DEFAULT_QUOTAS, team: TEAM },
    git: diskGit(gitRoot, 10_000)
  })
}, 120_000)
afterAll(async () => {
  await fx?.close()
  await git?.close()
  await rm(gitRoot, { recursive: true, force: true })
})

let labs = 0
/** A fresh team-plan lab and a read-write key on it. */
const newLab = async () => {
  labs += 1
  const slug = `quota-${labs}`
  const lab = await data(await fx.post("/api/v1/labs", { slug, name: slug, plan: "team" }, fx.admin), Lab, 201)
  const key = await createKey(fx.admin, [`lab:${slug}:rw`])
  return { lab, key: key.key }
}

const createKey = async (token: string, scopes: ReadonlyArray<string>) =>
  data(await fx.post("/api/v1/auth/keys", { name: "k", scopes }, token), CreatedApiKey, 201)

/** Expect 403 quota_exceeded whose message names the quota and the figures. */
const expectQuota = async (response: Response, ...mentions: ReadonlyArray<string | RegExp>) => {
  const message = await expectError(response, 403, "quota_exceeded")
  for (const mention of mentions) expect(message).toMatch(mention)
  return message
}

const write = (labId: string, path: string, bytes: number, token: string) =>
  fx.post("/api/v1/files", { labId, path, content: "x".repeat(bytes) }, token)

describe("API keys", () => {
  it("a lab holds at most its plan's live keys, whoever mints them; revoking one frees a slot", async () => {
    const { lab, key } = await newLab()
    const minted = [await createKey(fx.admin, [`lab:${lab.slug}:r`]), await createKey(key, [`lab:${lab.slug}:r`])]
    await createKey(key, [`lab:${lab.slug}:rw`])
    // 4 keys name the lab: the first, and the three above
    await expectQuota(
      await fx.post("/api/v1/auth/keys", { name: "one more", scopes: [`lab:${lab.slug}:r`] }, key),
      /API keys naming lab quota-\d+/,
      /4 of 4/
    )
    await expectQuota(await fx.post("/api/v1/auth/keys", { name: "one more", scopes: [`lab:${lab.slug}:rw`] }, fx.admin), /4 of 4/)
    // the typed client tells it from a plain 403
    const client = await fx.server.client(key)
    const refused = await Effect.runPromise(Effect.flip(client.keys.create({ payload: { name: "typed", scopes: [`lab:${lab.slug}:r`] } })))
    expect(refused._tag).toBe("QuotaExceeded")
    const forbidden = await Effect.runPromise(Effect.flip(client.keys.create({ payload: { name: "typed", scopes: ["admin"] } })))
    expect(forbidden._tag).toBe("Forbidden")

    // a key naming a full lab and another one is not created at all
    const { lab: roomy } = await newLab()
    const before = (await page(await fx.get("/api/v1/auth/keys", { limit: 100 }, fx.admin), ApiKey)).data.length
    await expectQuota(
      await fx.post("/api/v1/auth/keys", { name: "both", scopes: [`lab:${roomy.slug}:r`, `lab:${lab.slug}:r`] }, fx.admin),
      new RegExp(lab.slug)
    )
    expect((await page(await fx.get("/api/v1/auth/keys", { limit: 100 }, fx.admin), ApiKey)).data.length).toBe(before)

    const revoked = minted[0]
    if (revoked === undefined) throw new Error("unreachable")
    await data(await fx.del("/api/v1/auth/keys", { id: revoked.id }, fx.admin), ApiKey)
    await createKey(key, [`lab:${lab.slug}:r`])
  })
})

describe("running pods", () => {
  it("a lab runs at most its plan's pods at once; a stopped one makes room", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    const pod = async (name: string) => data(await fx.post("/api/v1/pods", { labId: lab.id, name, costPerHour: 1 }, key), Pod, 201)
    const start = (id: string) => fx.post(`/api/v1/pods/${id}/start`, { labId: lab.id }, key)
    const status = async (id: string) => data(await fx.get(`/api/v1/pods/${id}`, { labId: lab.id }, key), Pod)
    const first = await pod("first")
    const second = await pod("second")

    expect((await data(await start(first.id), Pod, 202)).status).toBe("starting")
    await expectQuota(await start(second.id), /running pods/, /1 of 1/)
    // asking again for the one that runs is still fine
    expect((await data(await start(first.id), Pod, 202)).status).toMatch(/starting|running/)
    await waitFor("first running", () => status(first.id), (p) => p.status === "running", 20_000)
    await expectQuota(await start(second.id), /running pods/)
    expect((await status(second.id)).status).toBe("stopped")

    await data(await fx.post(`/api/v1/pods/${first.id}/stop`, { labId: lab.id }, key), Pod, 202)
    await waitFor("first stopped", () => status(first.id), (p) => p.status === "stopped", 20_000)
    expect((await data(await start(second.id), Pod, 202)).status).toBe("starting")
    await waitFor("second running", () => status(second.id), (p) => p.status === "running", 20_000)
    await data(await fx.post(`/api/v1/pods/${second.id}/stop`, { labId: lab.id }, key), Pod, 202)
    await waitFor("second stopped", () => status(second.id), (p) => p.status === "stopped", 20_000)
  })
})

describe("stored bytes", () => {
  it("refuses a file write that would take the lab past its bytes; writes that do not grow it pass", async () => {
    const { lab, key } = await newLab()
    await data(await write(lab.id, "/a.md", 5_000, key), File, 201)
    await expectQuota(await write(lab.id, "/b.md", 4_000, key), /stored bytes/, /4\.88 KiB used/, /7\.81 KiB/)
    // growing a file counts only what it grows by
    await data(await write(lab.id, "/a.md", 7_000, key), File, 200)
    await expectQuota(await fx.patch("/api/v1/files", { labId: lab.id, path: "/a.md", content: "x".repeat(8_001) }, key), /stored bytes/)
    await expectQuota(await write(lab.id, "/b.md", 1_001, key), /stored bytes/)
    await data(await write(lab.id, "/b.md", 1_000, key), File, 201)
    // shrinking always passes, and frees room
    await data(await write(lab.id, "/a.md", 10, key), File, 200)
    await data(await fx.del("/api/v1/files", { labId: lab.id, path: "/b.md" }, key), Schema.Unknown)
    await data(await write(lab.id, "/c.md", 7_990, key), File, 201)
    expect((await fx.get("/api/v1/files", { labId: lab.id, path: "/c.md" }, key)).status).toBe(200)
  })

  it("counts synced files as use, but never fails a sync because of them", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    const url = await git.createRepo(`acme/quota-${lab.slug}`)
    const wc = await workingCopy(url)
    for (let i = 0; i < 3; i++) await put(wc.dir, `notes/${i}.md`, `${"y".repeat(4_000)}\n`)
    const head = await wc.commitAndPush("12 kB of notes")
    const user = userOf(fx.server, key)
    await user.link(lab.id, url, false)
    await user.syncedTo(lab.id, head)
    expect(await user.paths(lab.id)).toEqual(["/notes/0.md", "/notes/1.md", "/notes/2.md"])
    expect((await user.status(lab.id)).lastError).toBeNull()

    // over its bytes now: writes that grow it are refused, the rest pass
    await expectQuota(await write(lab.id, "/new.md", 1, key), /stored bytes/, /11\.7 KiB used/)
    await data(await write(lab.id, "/notes/0.md", 100, key), File, 200)
    // and the next pull brings what the repository has, quota or not
    await put(wc.dir, "notes/3.md", `${"z".repeat(4_000)}\n`)
    const next = await wc.commitAndPush("one more")
    expect((await user.syncNow(lab.id)).sha).toBe(next)
    expect(await user.paths(lab.id)).toContain("/notes/3.md")
  })
})

describe("the stored-bytes counter", () => {
  it("follows writes, deletes and a restore (it is what the quota reads)", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    const counted = async () => {
      const rows = await fx.server.sql((sql) =>
        sql<{ counter: string; actual: string }>`
          SELECT (SELECT file_bytes FROM lab_usage WHERE lab_id = ${lab.id})::text AS counter,
                 (SELECT COALESCE(sum(size), 0) FROM files WHERE lab_id = ${lab.id})::text AS actual`
      )
      return rows[0]
    }
    await data(await write(lab.id, "/a.md", 1_000, key), File, 201)
    await data(await write(lab.id, "/b.md", 2_000, key), File, 201)
    expect(await counted()).toEqual({ counter: "3000", actual: "3000" })
    const backup = await data(await fx.post("/api/v1/backups", { labId: lab.id }, key), Backup, 202)
    await waitFor("backup", async () => data(await fx.get(`/api/v1/backups/${backup.id}`, { labId: lab.id }, key), Backup), (b) => b.status === "completed")
    await data(await write(lab.id, "/a.md", 10, key), File, 200)
    await data(await fx.del("/api/v1/files", { labId: lab.id, path: "/b.md" }, key), Schema.Unknown)
    await data(await write(lab.id, "/c.md", 500, key), File, 201)
    expect(await counted()).toEqual({ counter: "510", actual: "510" })
    await data(await fx.post(`/api/v1/backups/${backup.id}/restore`, { labId: lab.id }, key), Backup, 202)
    await waitFor(
      "restore",
      async () => data(await fx.get(`/api/v1/backups/${backup.id}`, { labId: lab.id }, key), Backup),
      (b) => b.restore?.status === "completed"
    )
    expect(await counted()).toEqual({ counter: "3000", actual: "3000" })
  })
})

describe("backups", () => {
  const create = (labId: string, key: string) => fx.post("/api/v1/backups", { labId }, key)
  const settled = (labId: string, id: string, key: string) =>
    waitFor(
      `backup ${id}`,
      async () => data(await fx.get(`/api/v1/backups/${id}`, { labId }, key), Backup),
      (b) => b.status === "completed" || b.status === "failed",
      20_000
    )

  it("a lab keeps at most its plan's backups; deleting one makes room", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    for (let i = 0; i < 2; i++) {
      const started = await data(await create(lab.id, key), Backup, 202)
      expect((await settled(lab.id, started.id, key)).status).toBe("completed")
    }
    await expectQuota(await create(lab.id, key), /backups kept/, /2 of 2/)
    const [oldest] = (await page(await fx.get("/api/v1/backups", { labId: lab.id }, key), Backup)).data.slice(-1)
    if (oldest === undefined) throw new Error("no backup listed")
    await data(await fx.del(`/api/v1/backups/${oldest.id}`, { labId: lab.id }, key), Backup)
    expect((await settled(lab.id, (await data(await create(lab.id, key), Backup, 202)).id, key)).status).toBe("completed")
  })

  it("counts archives in stored bytes: a full lab cannot start one, and one that would not fit is not kept", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    await data(await write(lab.id, "/big.md", 7_990, key), File, 201)
    const started = await data(await create(lab.id, key), Backup, 202)
    const failed = await settled(lab.id, started.id, key)
    expect(failed.status).toBe("failed")
    expect(failed.error).toMatch(/quota exceeded: stored bytes/)
    expect(failed.size).toBeNull()

    await data(await write(lab.id, "/fill.md", 10, key), File, 201)
    await expectQuota(await create(lab.id, key), /stored bytes/, /7\.81 KiB of 7\.81 KiB/)
  })
})

describe("forced syncs", () => {
  it("a lab forces at most its plan's syncs a minute: then 429 with Retry-After", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    const url = await git.createRepo(`acme/forced-${lab.slug}`)
    const wc = await workingCopy(url)
    await put(wc.dir, "README.md", "# forced\n")
    const head = await wc.commitAndPush("first")
    const user = userOf(fx.server, key)
    await user.link(lab.id, url, false)
    await user.syncedTo(lab.id, head)
    await roomInWindow(20_000)

    const served = git.requests().length
    for (let i = 0; i < 2; i++) expect((await user.syncNow(lab.id)).sha).toBe(head)
    const fetches = git.requests().length
    expect(fetches).toBeGreaterThan(served)

    const limited = await fx.post("/api/v1/sync", { labId: lab.id }, key)
    expect(await expectError(limited, 429, "rate_limited")).toMatch(/2 syncs a minute/)
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60)
    expect(limited.headers.get("x-ratelimit-limit")).toBe("2")
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
    // the refused one did not reach the git host, and reading the status is not a forced sync
    expect(git.requests().length).toBe(fetches)
    expect((await user.status(lab.id)).lastSyncSha).toBe(head)
    // the operator's are not counted (a rate, like the lab's budget)
    expect((await userOf(fx.server, fx.admin).syncNow(lab.id)).sha).toBe(head)
    // another lab's forced syncs are its own
    const other = await newLab()
    const otherUrl = await git.createRepo(`acme/forced-other-${other.lab.slug}`)
    const otherWc = await workingCopy(otherUrl)
    await put(otherWc.dir, "README.md", "# other\n")
    const otherHead = await otherWc.commitAndPush("first")
    const otherUser = userOf(fx.server, other.key)
    await otherUser.link(other.lab.id, otherUrl, false)
    await otherUser.syncedTo(other.lab.id, otherHead)
    expect((await otherUser.syncNow(other.lab.id)).sha).toBe(otherHead)
  })
})

describe("records", () => {
  const task = (labId: string, key: string, title: string) => fx.post("/api/v1/tasks", { labId, title }, key)
  const telemetry = (labId: string, key: string, count: number) =>
    fx.post("/api/v1/telemetry", { labId, events: Array.from({ length: count }, (_, i) => ({ name: "loss", value: i })) }, key)
  const counted = async (labId: string) =>
    (await fx.server.sql((sql) => sql<{ n: string }>`SELECT records::text AS n FROM lab_usage WHERE lab_id = ${labId}`))[0]?.n

  it("a lab holds at most its plan's records across its resources; a refused batch stores nothing; deleting frees room", async () => {
    const { lab, key } = await newLab()
    for (let i = 0; i < 30; i++) expect((await task(lab.id, key, `task ${i}`)).status).toBe(201)
    for (let i = 0; i < 5; i++) {
      expect((await fx.post("/api/v1/knowledge", { labId: lab.id, title: `k${i}`, body: "b" }, key)).status).toBe(201)
    }
    for (let i = 0; i < 3; i++) await data(await write(lab.id, `/f${i}.md`, 10, key), File, 201)
    expect(await counted(lab.id)).toBe("38")

    // a batch of 5 would make 43: refused whole
    await expectQuota(await telemetry(lab.id, key, 5), /records of the team plan/, /would hold 43, limit 40/)
    const stored = await page(await fx.get("/api/v1/telemetry", { labId: lab.id, name: "loss" }, key), Schema.Unknown)
    expect(stored.data).toHaveLength(0)
    expect((await telemetry(lab.id, key, 2)).status).toBe(201)
    await expectQuota(await task(lab.id, key, "one more"), /records/, /limit 40/)
    await expectQuota(await write(lab.id, "/g.md", 1, key), /records/)
    // the operator meets the lab's quota too: it is the lab's, not the caller's
    await expectQuota(await task(lab.id, fx.admin, "admin's"), /records/)

    const first = await json(await task(lab.id, key, "x"))
    expect(first).toMatchObject({ error: { code: "quota_exceeded" } })
    const listed = await page(await fx.get("/api/v1/tasks", { labId: lab.id, limit: 1 }, key), Schema.Struct({ id: Schema.String }))
    const gone = listed.data[0]?.id ?? ""
    expect((await fx.del(`/api/v1/tasks/${gone}`, { labId: lab.id }, key)).status).toBe(200)
    expect(await counted(lab.id)).toBe("39")
    expect((await task(lab.id, key, "fits again")).status).toBe(201)
    expect(await counted(lab.id)).toBe("40")
  })

  it("rows the service writes by itself (countedNotRefused: a pull, an ended run's compute cost) are counted, never refused", async () => {
    const { lab, key } = await newLab()
    for (let i = 0; i < 40; i++) expect((await task(lab.id, key, `task ${i}`)).status).toBe(201)
    const insertTask = (sql: SqlClient.SqlClient, id: string) =>
      sql`INSERT INTO tasks (id, lab_id, title, status, created_at, updated_at) VALUES (${id}, ${lab.id}, 'system', 'todo', now(), now())`
    // a plain write at the limit is refused by the database
    const refused = await fx.server.sql((sql) => Effect.either(insertTask(sql, `task_${lab.slug}_a`).pipe(sql.withTransaction)))
    expect(refused._tag).toBe("Left")
    // the service's own bookkeeping in a transaction that says so passes, and counts
    await fx.server.sql((sql) => Effect.zipRight(countedNotRefused(sql), insertTask(sql, `task_${lab.slug}_b`)).pipe(sql.withTransaction))
    expect(await counted(lab.id)).toBe("41")
    // the setting ends with its transaction
    const after = await fx.server.sql((sql) => Effect.either(insertTask(sql, `task_${lab.slug}_c`).pipe(sql.withTransaction)))
    expect(after._tag).toBe("Left")
  })

  it("counts a sync's pulled files but never refuses a pull", { timeout: 60_000 }, async () => {
    const { lab, key } = await newLab()
    for (let i = 0; i < 39; i++) expect((await task(lab.id, key, `task ${i}`)).status).toBe(201)
    const url = await git.createRepo(`acme/records-${lab.slug}`)
    const wc = await workingCopy(url)
    for (let i = 0; i < 3; i++) await put(wc.dir, `notes/${i}.md`, `${i}\n`)
    const head = await wc.commitAndPush("three notes")
    const user = userOf(fx.server, key)
    await user.link(lab.id, url, false)
    const synced = await user.syncedTo(lab.id, head)
    expect(synced.lastError).toBeNull()
    expect(await user.paths(lab.id)).toEqual(["/notes/0.md", "/notes/1.md", "/notes/2.md"])
    expect(await counted(lab.id)).toBe("42")
    await expectQuota(await task(lab.id, key, "over"), /would hold 43, limit 40/)
  })
})

describe("the contract", () => {
  it("declares 403 quota_exceeded on every route that can answer it", async () => {
    const spec = await json(await fx.server.request("GET", "/api/v1/openapi.json"))
    const Responses = Schema.Struct({ responses: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
    const Spec = Schema.Struct({ paths: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Responses }) }) })
    const { paths } = Schema.decodeUnknownSync(Spec)(spec)
    const routes = [
      ["/api/v1/auth/keys", "post"],
      ["/api/v1/files", "post"],
      ["/api/v1/files", "patch"],
      ["/api/v1/pods/{podId}/start", "post"],
      ["/api/v1/backups", "post"],
      ["/api/v1/tasks", "post"],
      ["/api/v1/telemetry", "post"]
    ] as const
    for (const [path, method] of routes) {
      expect(JSON.stringify(paths[path]?.[method]?.responses["403"]), `${method} ${path}`).toContain("QuotaExceededError")
    }
  })
})
