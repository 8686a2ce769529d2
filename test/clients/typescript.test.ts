/**
 * The generated TypeScript client (clients/typescript) against the running
 * server: namespaces, typed answers, auto-pagination, one error class per
 * envelope code, retries (429 with Retry-After, a dropped connection that must
 * not make a second record, 503), timeouts, and the idempotency key a retry repeats.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  LabServiceClient,
  LabServiceError,
  NotFoundError,
  PermissionDeniedError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
  ServiceUnavailableError,
  TimeoutError,
  ValidationError
} from "../../clients/typescript/src/index.js"
import { DEFAULT_QUOTAS } from "../../src/quotas/PlanQuotas.js"
import { diskGit } from "../support/DiskGit.js"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { type Fixture, startFixture } from "../support/LabFixture.js"
import { put } from "../support/SyncSupport.js"
import { type Front, type FrontAction, startDroppingProxy, startFront } from "./typescript-support.js"

let fx: Fixture
let git: GitServer
let gitRoot: string
let writer: LabServiceClient
beforeAll(async () => {
  git = await startGitServer()
  gitRoot = await mkdtemp(join(tmpdir(), "lab-tsclient-"))
  // two keys a lab: the fixture's writer and reader fill the quota, so a third is quota_exceeded
  fx = await startFixture("tsclient", {
    quotas: { ...DEFAULT_QUOTAS, team: { ...DEFAULT_QUOTAS.team, apiKeys: 2 } },
    git: diskGit(gitRoot, 10_000)
  })
  writer = new LabServiceClient({ apiKey: fx.writer, baseUrl: fx.server.baseUrl })
}, 120_000)
afterAll(async () => {
  await fx?.close()
  await git?.close()
  await rm(gitRoot, { recursive: true, force: true })
})

const fronts: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  await Promise.all(fronts.splice(0).map((front) => front.close()))
})
const front = async (plan: (index: number) => FrontAction): Promise<Front> => {
  const started = await startFront(fx.server.baseUrl, plan)
  fronts.push(started)
  return started
}
const envelope = (code: string, status: number) => ({ error: { code, message: `${code} from the front`, status } })

/** The error a call rejects with (fails the test when it resolves). */
const refusal = async (call: () => Promise<unknown>): Promise<unknown> => {
  try {
    await call()
  } catch (error) {
    return error
  }
  throw new Error("the call succeeded")
}

describe("the TypeScript client", () => {
  it("reads its key and base URL from LAB_SERVICE_API_KEY and LAB_SERVICE_BASE_URL", async () => {
    process.env["LAB_SERVICE_API_KEY"] = fx.writer
    process.env["LAB_SERVICE_BASE_URL"] = `${fx.server.baseUrl}/`
    try {
      const client = new LabServiceClient()
      expect(client.baseUrl).toBe(fx.server.baseUrl)
      const me = await client.me.get()
      expect(JSON.stringify(me)).toContain(fx.lab.slug)
    } finally {
      delete process.env["LAB_SERVICE_API_KEY"]
      delete process.env["LAB_SERVICE_BASE_URL"]
    }
  })

  it("mirrors the routes: tasks, files, sync and experiment queues, with typed answers", async () => {
    const task = await writer.tasks.create({ labId: fx.lab.id, title: "from the client" })
    expect(task).toMatchObject({ labId: fx.lab.id, title: "from the client", status: "todo" })
    const listed = await writer.tasks.list({ labId: fx.lab.id })
    expect(listed.data.map((t) => t.id)).toContain(task.id)

    const file = await writer.files.write({ labId: fx.lab.id, path: "/notes/client.md", content: "# one" })
    const read = await writer.files.read({ labId: fx.lab.id, path: "/notes/client.md" })
    expect(read.data).toMatchObject({ path: "/notes/client.md", content: "# one", sha: file.sha })

    const url = await git.createRepo("acme/tsclient")
    const wc = await workingCopy(url)
    await put(wc.dir, "README.md", "# from git\n")
    const head = await wc.commitAndPush("first")
    const linked = await writer.sync.link({ labId: fx.lab.id, repo: url, autoPushOnEdit: false })
    expect(linked.repo).toBe(url)
    const synced = await writer.sync.now({ labId: fx.lab.id })
    expect(synced).toMatchObject({ ok: true, sha: head })
    const status = await writer.sync.status({ labId: fx.lab.id })
    expect(status.lastSyncSha).toBe(head)
    const queues = await writer.experiments.queues.list({ labId: fx.lab.id })
    expect(Array.isArray(queues.data)).toBe(true)
  })

  it("iterates a list across pages with for await, and still gives one page at a time", async () => {
    const lab = await fx.createLab("tsclient-pages")
    const admin = new LabServiceClient({ apiKey: fx.admin, baseUrl: fx.server.baseUrl })
    const made: Array<string> = []
    for (let i = 0; i < 5; i++) made.push((await admin.tasks.create({ labId: lab.id, title: `task ${i}` })).id)

    const seen: Array<string> = []
    for await (const task of admin.tasks.list({ labId: lab.id, limit: 2 })) seen.push(task.id)
    expect(seen.sort()).toEqual([...made].sort())

    const pages: Array<number> = []
    for await (const page of admin.tasks.list({ labId: lab.id, limit: 2 }).pages()) pages.push(page.data.length)
    expect(pages).toEqual([2, 2, 1])

    const first = await admin.tasks.list({ labId: lab.id, limit: 2 })
    expect(first.hasNextPage()).toBe(true)
    const second = await first.nextPage()
    expect(second?.data).toHaveLength(2)
    expect(second?.data.some((t) => first.data.some((f) => f.id === t.id))).toBe(false)
  })

  it("throws one class per envelope code, each carrying status, code, message and the request id", async () => {
    const cases: Array<[() => Promise<unknown>, new (...args: never[]) => ApiError, number, string]> = [
      [() => new LabServiceClient({ apiKey: "lab_sk_nope", baseUrl: fx.server.baseUrl }).me.get(), AuthenticationError, 401, "unauthorized"],
      [
        () => new LabServiceClient({ apiKey: fx.reader, baseUrl: fx.server.baseUrl }).tasks.create({ labId: fx.lab.id, title: "no" }),
        PermissionDeniedError,
        403,
        "forbidden"
      ],
      [
        () =>
          new LabServiceClient({ apiKey: fx.admin, baseUrl: fx.server.baseUrl }).auth.keys.create({
            name: "third",
            scopes: [`lab:${fx.lab.slug}:r`]
          }),
        QuotaExceededError,
        403,
        "quota_exceeded"
      ],
      [() => writer.agents.get("agent_0000000000000000", { labId: fx.lab.id }), NotFoundError, 404, "not_found"],
      [() => writer.tasks.create({ labId: fx.lab.id, title: "" }), ValidationError, 422, "validation_error"]
    ]
    for (const [call, ErrorClass, status, code] of cases) {
      const error = await refusal(call)
      expect(error, code).toBeInstanceOf(ErrorClass)
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toBeInstanceOf(LabServiceError)
      if (!(error instanceof ApiError)) continue
      expect({ status: error.status, code: error.code }).toEqual({ status, code })
      expect(error.message.length).toBeGreaterThan(0)
      expect(error.requestId).toMatch(/^req_/)
    }
    // quota_exceeded is a kind of 403
    expect(QuotaExceededError.prototype).toBeInstanceOf(PermissionDeniedError)
  })

  it("files.write takes expectedSha, and a stale one is a ConflictError", async () => {
    const first = await writer.files.write({ labId: fx.lab.id, path: "/notes/race.md", content: "v1" })
    const second = await writer.files.write({ labId: fx.lab.id, path: "/notes/race.md", content: "v2", expectedSha: first.sha })
    expect(second.sha).not.toBe(first.sha)
    const error = await refusal(() =>
      writer.files.write({ labId: fx.lab.id, path: "/notes/race.md", content: "v3", expectedSha: first.sha })
    )
    expect(error).toBeInstanceOf(ConflictError)
    expect(error).toMatchObject({ status: 409, code: "conflict" })
    const read = await writer.files.read({ labId: fx.lab.id, path: "/notes/race.md" })
    expect(read.data).toMatchObject({ content: "v2" })
  })

  it("answers 500 and 503 with ServerError and ServiceUnavailableError; 503 is retried, maxRetries per client and per call", async () => {
    const failing = await front(() => ({ kind: "answer", status: 503, headers: { "retry-after": "0" }, body: envelope("service_unavailable", 503) }))
    const client = new LabServiceClient({ apiKey: fx.writer, baseUrl: failing.baseUrl, maxRetries: 1 })
    const error = await refusal(() => client.tasks.list({ labId: fx.lab.id }))
    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error).toMatchObject({ status: 503, code: "service_unavailable", requestId: "req_front1" })
    expect(failing.seen).toHaveLength(2)
    await refusal(() => client.tasks.list({ labId: fx.lab.id }, { maxRetries: 0 }))
    expect(failing.seen).toHaveLength(3)

    const broken = await front(() => ({ kind: "answer", status: 500, body: envelope("server_error", 500) }))
    const onBroken = new LabServiceClient({ apiKey: fx.writer, baseUrl: broken.baseUrl })
    expect(await refusal(() => onBroken.me.get())).toBeInstanceOf(ServerError)
    expect(broken.seen).toHaveLength(1)
  })

  it("retries a 429 after its Retry-After, with the same idempotency key, and does the work once", async () => {
    const limited = await front((i) =>
      i === 0 ? { kind: "answer", status: 429, headers: { "retry-after": "1" }, body: envelope("rate_limited", 429) } : { kind: "pass" }
    )
    const client = new LabServiceClient({ apiKey: fx.writer, baseUrl: limited.baseUrl })
    const task = await client.tasks.create({ labId: fx.lab.id, title: "after a 429" })
    expect(task.title).toBe("after a 429")
    expect(limited.seen).toHaveLength(2)
    expect(limited.seen[1]!.at - limited.seen[0]!.at).toBeGreaterThanOrEqual(950)
    expect(limited.seen[0]!.idempotencyKey).toMatch(/.+/)
    expect(limited.seen[1]!.idempotencyKey).toBe(limited.seen[0]!.idempotencyKey)

    // spent retries: the RateLimitedError itself
    const always = await front(() => ({ kind: "answer", status: 429, headers: { "retry-after": "0" }, body: envelope("rate_limited", 429) }))
    const error = await refusal(() => new LabServiceClient({ apiKey: fx.writer, baseUrl: always.baseUrl }).me.get())
    expect(error).toBeInstanceOf(RateLimitedError)
    expect(always.seen).toHaveLength(3)
  })

  it("uses the caller's idempotency key when given one", async () => {
    const seen = await front(() => ({ kind: "pass" }))
    const client = new LabServiceClient({ apiKey: fx.writer, baseUrl: seen.baseUrl })
    const first = await client.tasks.create({ labId: fx.lab.id, title: "keyed" }, { idempotencyKey: "ts-client-key-1" })
    const again = await client.tasks.create({ labId: fx.lab.id, title: "keyed" }, { idempotencyKey: "ts-client-key-1" })
    expect(again.id).toBe(first.id)
    expect(seen.seen.map((r) => r.idempotencyKey)).toEqual(["ts-client-key-1", "ts-client-key-1"])
    await client.tasks.list({ labId: fx.lab.id })
    expect(seen.seen[2]!.idempotencyKey).toBeUndefined()
  })

  it("retries a dropped connection without making a second record", async () => {
    const url = new URL(fx.server.baseUrl)
    const proxy = await startDroppingProxy({ host: url.hostname, port: Number(url.port) })
    fronts.push(proxy)
    const lab = await fx.createLab("tsclient-drop")
    const client = new LabServiceClient({ apiKey: fx.admin, baseUrl: proxy.baseUrl })
    const task = await client.tasks.create({ labId: lab.id, title: "once only" })
    expect(proxy.connections()).toBeGreaterThanOrEqual(2)
    const direct = new LabServiceClient({ apiKey: fx.admin, baseUrl: fx.server.baseUrl })
    const all: Array<string> = []
    for await (const t of direct.tasks.list({ labId: lab.id })) all.push(t.id)
    expect(all).toEqual([task.id])

    // with no retries left, the drop is a ConnectionError
    const proxyAgain = await startDroppingProxy({ host: url.hostname, port: Number(url.port) })
    fronts.push(proxyAgain)
    const error = await refusal(() =>
      new LabServiceClient({ apiKey: fx.admin, baseUrl: proxyAgain.baseUrl, maxRetries: 0 }).tasks.list({ labId: lab.id })
    )
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).not.toBeInstanceOf(TimeoutError)
  })

  it("times out per client and per call with a TimeoutError", async () => {
    const silent = await front(() => ({ kind: "hang" }))
    const client = new LabServiceClient({ apiKey: fx.writer, baseUrl: silent.baseUrl, timeout: 300, maxRetries: 0 })
    const started = Date.now()
    const error = await refusal(() => client.me.get())
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error).toBeInstanceOf(ConnectionError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    expect(Date.now() - started).toBeLessThan(5_000)

    const perCall = Date.now()
    expect(await refusal(() => client.me.get({ timeout: 100, maxRetries: 1 }))).toBeInstanceOf(TimeoutError)
    expect(silent.seen).toHaveLength(3)
    expect(Date.now() - perCall).toBeLessThan(3_000)
  })
})
