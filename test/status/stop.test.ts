/**
 * The probes and a graceful stop, on the real process (`src/main.ts`, embedded PGlite): /healthz and /readyz answer
 * without a credential and outside the rate limits; on SIGTERM /readyz turns 503 while everything else is still
 * served (STOP_DRAIN_MS), then new requests are refused, a request in flight at SIGTERM completes, one that never
 * ends is cut after STOP_REQUESTS_MS, the process exits 0, and what the completed request wrote is there after a
 * restart.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { File } from "../../src/files/File.js"
import { data } from "../support/http.js"
import { startServiceProcess } from "../support/ServiceProcess.js"
import { fixedKeys, sleep, userOf } from "../support/SyncSupport.js"

const DRAIN_MS = 2_000
const REQUESTS_MS = 3_000
const dirs: Array<string> = []
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

/** A POST whose body is sent in two parts: the request is in flight until `finish` sends the second. */
const halfSent = (baseUrl: string, path: string, token: string, body: string) => {
  const bytes = Buffer.from(body)
  const cut = Math.floor(bytes.length / 2)
  let answer: (value: { status: number; body: string }) => void = () => {}
  const answered = new Promise<{ status: number; body: string }>((resolve) => (answer = resolve))
  const req = httpRequest(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": bytes.length }
  })
  req.on("response", (res) => {
    let text = ""
    res.on("data", (chunk: Buffer) => (text += chunk.toString()))
    res.on("end", () => answer({ status: res.statusCode ?? 0, body: text }))
  })
  req.on("error", (error) => answer({ status: 0, body: String(error) }))
  req.write(bytes.subarray(0, cut))
  return { finish: () => (req.end(bytes.subarray(cut)), answered), answered }
}

describe("probes and a graceful stop", () => {
  it("probes answer without a credential or a rate limit; on SIGTERM /readyz is 503 while a request in flight completes", { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "lab-stop-"))
    dirs.push(dataDir)
    const keys = fixedKeys()
    const settings = { dataDir, ...keys, env: { STOP_DRAIN_MS: String(DRAIN_MS), STOP_REQUESTS_MS: String(REQUESTS_MS) } }
    const service = await startServiceProcess(settings)
    try {
      const alive = await service.request("GET", "/healthz")
      expect(alive.status).toBe(200)
      // a probe's answer carries no rate-limit headers, so it is read without the suite's envelope checks
      expect(await alive.json()).toEqual({ data: { status: "alive" }, meta: expect.anything() })
      expect(alive.headers.get("x-request-id")).toMatch(/\S/)
      expect(alive.headers.get("x-ratelimit-limit")).toBeNull()
      // over the anonymous limit of 60 a minute: a probe is never refused for it
      for (let i = 0; i < 70; i++) {
        const ready = await service.request("GET", "/readyz")
        expect(ready.status).toBe(200)
        await ready.body?.cancel()
      }

      const user = userOf(service, keys.adminKey)
      const labId = await user.createLab("stop")
      const content = `${"x".repeat(64 * 1024)}\n`
      const inFlight = halfSent(service.baseUrl, "/api/v1/files", keys.adminKey, JSON.stringify({ labId, path: "/notes/late.md", content }))
      // and one whose body never ends: cut when STOP_REQUESTS_MS is over
      const stuck = halfSent(service.baseUrl, "/api/v1/files", keys.adminKey, JSON.stringify({ labId, path: "/notes/never.md", content }))
      await sleep(300)

      const stoppedAt = Date.now()
      const exiting = service.stop("SIGTERM")
      await sleep(300)
      const draining = await service.request("GET", "/readyz")
      expect(draining.status).toBe(503)
      expect(await draining.json()).toEqual({ error: { code: "service_unavailable", status: 503, message: "not ready: draining" } })
      expect((await service.request("GET", "/healthz")).status).toBe(200)
      expect((await service.request("GET", "/api/v1/status")).status).toBe(200)

      // past the drain the server takes no new request, and the one in flight still completes
      await sleep(DRAIN_MS)
      const late = await service.request("GET", "/api/v1/status").then((r) => r.status, () => "refused")
      expect([503, "refused"]).toContain(late)
      const written = await inFlight.finish()
      expect(written.status, written.body).toBe(201)
      // the stuck request's connection is closed once STOP_REQUESTS_MS is over, and the process exits 0
      const cut = stuck.answered
      expect(await exiting).toBe(0)
      expect(Date.now() - stoppedAt).toBeLessThan(DRAIN_MS + REQUESTS_MS + 5_000)
      expect((await cut).status).toBe(0)
      expect(service.output()).toMatch(/stopping: not ready/)

      const again = await startServiceProcess(settings)
      try {
        const file = await data(await userOf(again, keys.adminKey).call("GET", `/api/v1/files?labId=${labId}&path=/notes/late.md`), File)
        expect(file.content).toBe(content)
      } finally {
        expect(await again.stop("SIGTERM")).toBe(0)
      }
    } finally {
      await service.stop("SIGKILL")
    }
  })
})
