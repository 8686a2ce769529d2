/**
 * The log a deployment writes (a real `src/main.ts` process, embedded PGlite, a real git server): by default JSON,
 * one object a line; a line per request with its request id, route, status and duration; a line per pull and per
 * push with the lab, the commit, the counts and the duration; and no secret anywhere (the operator's key, a lab
 * key, the master key, a webhook secret). GET /metrics shows a lab's outbox while its host is down, and the failed
 * pushes.
 */
import { Schema } from "effect"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { GitServer } from "../support/GitServer.js"
import { operatorOf } from "../support/LabFixture.js"
import { startServiceProcess } from "../support/ServiceProcess.js"
import { bareGit, deliver, fixedKeys, pushDelivery, until, userOf } from "../support/SyncSupport.js"
import { repoWith, useGitServer } from "../support/SyncServer.js"

const Line = Schema.parseJson(
  Schema.Struct({
    message: Schema.String,
    logLevel: Schema.String,
    timestamp: Schema.String,
    annotations: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  })
)
const decodeLine = Schema.decodeUnknownSync(Line)

let git: GitServer
let base: string
useGitServer("lab-logs-", (started, root) => {
  git = started
  base = root
})

describe("the deployment's log", () => {
  it("is JSON lines: one per request, pull and push, with no secret in it; /metrics shows the outbox and failed pushes", { timeout: 180_000 }, async () => {
    const { url: repo, wc } = await repoWith(git, "logs", { "README.md": "# logs\n" })
    await wc.remove()
    const keys = fixedKeys()
    const service = await startServiceProcess({ dataDir: join(base, "data"), ...keys })
    try {
      const user = userOf(service, keys.adminKey)
      const operator = operatorOf(service, keys.adminKey)
      const lab = await operator.createLab("logs")
      const labId = lab.id
      const labKey = (await operator.createKey(`lab:${lab.slug}:rw`)).key
      await user.link(labId, repo, true)
      await user.syncNow(labId)
      const secret = (await user.secret(labId)).secret ?? ""
      expect(secret).toMatch(/^[0-9a-f]{64}$/)
      // GitLab sends the secret itself, as a header
      const synced = await bareGit(git.root, "logs")("rev-parse", "main")
      const hook = pushDelivery("gitlab", { url: repo, fullName: "logs", branch: "main", before: synced, after: synced }, secret)
      expect((await deliver(service, "gitlab", hook)).status).toBe(202)
      const listed = await service.request("GET", `/api/v1/files?labId=${labId}`, { token: labKey })
      await listed.body?.cancel()
      await user.writeOk(labId, "/notes/a.md", "a\n")
      await user.pushed(labId)
      const head = await bareGit(git.root, "logs")("rev-parse", "main")
      // the push's line is written once its job ends, which may be just after the host has the commit
      await until(async () => (service.output().includes('"message":"push"') ? true : undefined), "the push's log line", 10_000)

      const output = service.output()
      const lines = output.split("\n").filter((l) => l.trim() !== "").map((l) => decodeLine(l))
      const annotated = (message: string) => lines.filter((l) => l.message === message).map((l) => l.annotations)

      const request = annotated("request").find((a) => a["request_id"] === listed.headers.get("x-request-id"))
      expect(request).toMatchObject({ method: "GET", route: "/api/v1/files", status: 200 })
      expect(request?.["duration_ms"]).toEqual(expect.any(Number))
      expect(annotated("pull")).toContainEqual(expect.objectContaining({ lab: labId, added: 1, duration_ms: expect.any(Number) }))
      expect(annotated("push")).toContainEqual(expect.objectContaining({ lab: labId, pushed: 1, commit: head }))

      for (const hidden of [keys.adminKey, keys.masterKey, labKey, secret]) expect(output).not.toContain(hidden)

      // the host down: the writes wait in the outbox, and the worker's pushes fail
      const metric = async (series: string) => {
        const text = await (await service.request("GET", "/metrics", { token: keys.adminKey })).text()
        const line = text.split("\n").find((l) => l.startsWith(`${series} `))
        return line === undefined ? 0 : Number(line.slice(series.length + 1))
      }
      git.failWith(503, Number.POSITIVE_INFINITY)
      await user.writeOk(labId, "/notes/b.md", "b\n")
      await user.writeOk(labId, "/notes/c.md", "c\n")
      expect(await metric(`sync_outbox_depth{lab="${labId}"}`)).toBe(2)
      await until(async () => ((await metric('sync_failures_total{kind="push"}')) > 0 ? true : undefined), "a failed push", 60_000)
      git.failWith(503, 0)
      await user.pushed(labId, 60_000)
      expect(await metric(`sync_outbox_depth{lab="${labId}"}`)).toBe(0)
    } finally {
      await service.stop("SIGTERM")
    }
  })

  it("refuses to start on a LOG_LEVEL it does not know, naming the variable", { timeout: 60_000 }, async () => {
    const keys = fixedKeys()
    const started = startServiceProcess({ dataDir: join(base, "bad"), ...keys, env: { LOG_LEVEL: "loud" } })
    await expect(started).rejects.toThrow(/LOG_LEVEL/)
  })
})
