/**
 * Traces over OTLP (a real `src/main.ts` process, a real git server, and a collector of our own on loopback that
 * keeps what it is sent): with OTEL_EXPORTER_OTLP_ENDPOINT set, a request's span carries its request id, its SQL
 * statements are spans of the same trace, and a sync job and its git network calls have spans of their own.
 */
import { Schema } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { GitServer } from "../support/GitServer.js"
import { startServiceProcess } from "../support/ServiceProcess.js"
import { bareGit, deliver, fixedKeys, pushDelivery, until, userOf } from "../support/SyncSupport.js"
import { repoWith, useGitServer } from "../support/SyncServer.js"

const Attribute = Schema.Struct({ key: Schema.String, value: Schema.Struct({ stringValue: Schema.optional(Schema.String) }) })
const Span = Schema.Struct({
  traceId: Schema.String,
  spanId: Schema.String,
  name: Schema.String,
  attributes: Schema.optionalWith(Schema.Array(Attribute), { default: () => [] })
})
const Export = Schema.parseJson(
  Schema.Struct({
    resourceSpans: Schema.Array(Schema.Struct({ scopeSpans: Schema.Array(Schema.Struct({ spans: Schema.Array(Span) })) }))
  })
)
type Span = typeof Span.Type

const attribute = (span: Span, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue

let git: GitServer
let base: string
useGitServer("lab-traces-", (started, root) => {
  git = started
  base = root
})

const spans: Array<Span> = []
let collector: Server
let collectorUrl: string
beforeAll(async () => {
  collector = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk: Buffer) => (body += chunk.toString()))
    request.on("end", () => {
      if (request.url === "/v1/traces") {
        for (const resource of Schema.decodeUnknownSync(Export)(body).resourceSpans) {
          for (const scope of resource.scopeSpans) spans.push(...scope.spans)
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())))

describe("traces over OTLP", () => {
  it("a span per request with its request id, SQL spans in its trace, spans per sync job and git call", { timeout: 180_000 }, async () => {
    const { url: repo, wc } = await repoWith(git, "traces", { "README.md": "# traces\n" })
    await wc.remove()
    const keys = fixedKeys()
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_BSP_SCHEDULE_DELAY: "200" }
    const service = await startServiceProcess({ dataDir: join(base, "data"), ...keys, env })
    try {
      const user = userOf(service, keys.adminKey)
      const labId = await user.createLab("traces")
      const listed = await service.request("GET", `/api/v1/files?labId=${labId}`, { token: keys.adminKey })
      await listed.body?.cancel()
      const requestId = listed.headers.get("x-request-id") ?? ""
      await user.link(labId, repo, false)
      await user.syncNow(labId)
      // GitLab sends the webhook's secret itself, as a header
      const secret = (await user.secret(labId)).secret ?? ""
      const head = await bareGit(git.root, "traces")("rev-parse", "main")
      const hook = pushDelivery("gitlab", { url: repo, fullName: "traces", branch: "main", before: head, after: head }, secret)
      expect((await deliver(service, "gitlab", hook)).status).toBe(202)

      const request = await until(
        async () => spans.find((s) => attribute(s, "request.id") === requestId),
        "the request's span at the collector",
        30_000
      )
      expect(attribute(request, "http.route")).toBe("/api/v1/files")
      await until(
        async () => (spans.some((s) => s.traceId === request.traceId && s.name.startsWith("sql.")) ? true : undefined),
        "an SQL statement's span in the request's trace",
        30_000
      )
      const pull = await until(async () => spans.find((s) => s.name === "sync.pull" && attribute(s, "lab.id") === labId), "a sync.pull span", 30_000)
      const fetch = await until(async () => spans.find((s) => s.name === "git.fetch" && s.traceId === pull.traceId), "a git.fetch span in the pull's trace", 30_000)
      expect(attribute(fetch, "git.host")).toBe(new URL(repo).host)
      // a span names hosts and ids, never a key or a secret (the headers it records are redacted)
      const hookSpan = await until(async () => spans.find((s) => s.attributes.some((a) => a.key === "http.request.header.x-gitlab-token")), "the webhook's span", 30_000)
      expect(attribute(hookSpan, "http.request.header.x-gitlab-token")).toBe("<redacted>")
      expect(JSON.stringify(spans)).not.toContain(keys.adminKey)
      expect(JSON.stringify(spans)).not.toContain(secret)
    } finally {
      await service.stop("SIGTERM")
    }
  })
})
