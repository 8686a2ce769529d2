import { Either } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Resolve } from "../../layers/git/Transport.js"
import { parseAllowedHosts } from "../../src/sync/HostPolicy.js"
import { userOf } from "../support/SyncSupport.js"
import { diskGit } from "../support/DiskGit.js"
import { type FakeHost, startFakeHost } from "../support/FakeGitHost.js"
import { expectError } from "../support/http.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

/**
 * Outbound git traffic (issue: SSRF). A lab key chooses the repository URL, so
 * the service must never become a way into the operator's network: a canary
 * listening on loopback must receive nothing, however its address is spelled,
 * whatever a name resolves to when the service connects, wherever a redirect
 * points; and a failure never repeats what the remote sent.
 */
let canary: FakeHost
let gitRoot: string

beforeAll(async () => {
  canary = await startFakeHost()
  gitRoot = await mkdtemp(join(tmpdir(), "lab-outbound-"))
})
afterAll(async () => {
  await canary.close()
  await rm(gitRoot, { recursive: true, force: true })
})

const serverWith = async (options: { readonly allowed?: string; readonly resolve?: Resolve } = {}) =>
  startTestServer({
    git: diskGit(await mkdtemp(join(gitRoot, "store-")), 10_000, {
      allowedHosts: Either.getOrThrow(parseAllowedHosts(options.allowed ?? "")),
      ...(options.resolve ? { resolve: options.resolve } : {})
    })
  })

const link = (server: TestServer, labId: string, repo: string, token?: string) =>
  server.request("PATCH", "/api/v1/sync", { token: server.adminKey, json: { labId, repo, ...(token ? { token } : {}) } })

const forcedSync = (server: TestServer, labId: string) => server.request("POST", "/api/v1/sync", { token: server.adminKey, json: { labId } })

describe("outbound git traffic", () => {
  it("refuses private addresses at link time, in every spelling, and the canary hears nothing", async () => {
    const server = await serverWith()
    try {
      const labId = await userOf(server, server.adminKey).createLab("ssrf-literals")
      const p = canary.port
      const spellings = [
        `http://127.0.0.1:${p}/x.git`,
        `http://localhost:${p}/x.git`,
        `http://LOCALHOST.:${p}/x.git`,
        `http://git.localhost:${p}/x.git`,
        `http://[::1]:${p}/x.git`,
        `http://[0:0:0:0:0:0:0:1]:${p}/x.git`,
        `http://[::ffff:127.0.0.1]:${p}/x.git`,
        `http://2130706433:${p}/x.git`,
        `http://0x7f000001:${p}/x.git`,
        `http://0177.0.0.1:${p}/x.git`,
        `http://127.1:${p}/x.git`,
        `http://0.0.0.0:${p}/x.git`,
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/x.git",
        "http://172.16.5.4/x.git",
        "http://192.168.1.1/x.git",
        "http://100.64.0.1/x.git",
        "http://[fd00::1]/x.git",
        "http://[fe80::1]/x.git",
        "http://224.0.0.1/x.git"
      ]
      for (const repo of spellings) {
        const message = await expectError(await link(server, labId, repo), 422, "validation_error")
        expect(message, repo).toMatch(/^repo: .*(not allowed|this machine|address)/)
      }
      expect(canary.requests()).toEqual([])
    } finally {
      await server.close()
    }
  })

  it("checks the address actually connected to: a name that rebinds to loopback after the link is refused", async () => {
    let lookups = 0
    // a hostile name server: public at link time, loopback afterwards
    const resolve: Resolve = async () => (lookups++ === 0 ? [{ address: "93.184.216.34", family: 4 }] : [{ address: "127.0.0.1", family: 4 }])
    const server = await serverWith({ resolve })
    try {
      const labId = await userOf(server, server.adminKey).createLab("ssrf-rebind")
      expect((await link(server, labId, `http://rebind.example:${canary.port}/x.git`)).status).toBe(200)
      const message = await expectError(await forcedSync(server, labId), 502, "bad_gateway")
      expect(message).toMatch(/rebind\.example is not allowed: 127\.0\.0\.1 is a loopback address/)
      expect(lookups).toBeGreaterThan(1)
      expect(canary.requests()).toEqual([])
    } finally {
      await server.close()
    }
  })

  it("follows redirects only within the origin: neither the canary nor another allowed host gets a request, nor the token", async () => {
    const other = await startFakeHost()
    const redirector = await startFakeHost((req, res) => {
      const target = req.url?.includes("to-other") ? other.origin : canary.origin
      res.writeHead(302, { location: `${target}/x.git/info/refs?service=git-upload-pack` }).end()
    })
    const server = await serverWith({ allowed: `127.0.0.1:${redirector.port},127.0.0.1:${other.port}` })
    try {
      const user = userOf(server, server.adminKey)
      for (const [slug, path] of [["ssrf-redirect-canary", "to-canary"], ["ssrf-redirect-other", "to-other"]] as const) {
        const labId = await user.createLab(slug)
        expect((await link(server, labId, `${redirector.origin}/${path}/x.git`, "s3cret-token")).status).toBe(200)
        const message = await expectError(await forcedSync(server, labId), 502, "bad_gateway")
        expect(message).toMatch(/redirected to another origin/)
      }
      // the token went to the origin it was given for, and nowhere else
      expect(redirector.requests().some((r) => r.authorization !== undefined)).toBe(true)
      expect(other.requests()).toEqual([])
      expect(canary.requests()).toEqual([])
    } finally {
      await server.close()
      await other.close()
      await redirector.close()
    }
  })

  it("reports a failed git call by its status and a fixed description, never the body the remote sent", async () => {
    const secret = "INTERNAL-ONLY-9f8e7d"
    const chatty = await startFakeHost((req, res) => {
      if (req.url?.includes("not-found")) res.writeHead(404, "Not Found " + secret, { "content-type": "text/plain" }).end(`${secret} `.repeat(50))
      else res.writeHead(200, { "content-type": "text/html" }).end(`<html>${secret}</html>`)
    })
    const server = await serverWith({ allowed: `127.0.0.1:${chatty.port}` })
    try {
      const user = userOf(server, server.adminKey)
      const cases = [
        ["ssrf-body-404", `${chatty.origin}/not-found/x.git`, /answered HTTP 404 \(Not Found\)$/],
        ["ssrf-body-html", `${chatty.origin}/page/x.git`, /does not speak git's smart HTTP protocol$/]
      ] as const
      for (const [slug, repo, expected] of cases) {
        const labId = await user.createLab(slug)
        expect((await link(server, labId, repo)).status).toBe(200)
        const message = await expectError(await forcedSync(server, labId), 502, "bad_gateway")
        expect(message).toMatch(expected)
        expect(message).not.toContain(secret)
        const status = await user.status(labId)
        expect(status.lastError?.message).toMatch(expected)
        expect(status.lastError?.message).not.toContain(secret)
      }
    } finally {
      await server.close()
      await chatty.close()
    }
  })

  it("refuses a repository URL with a query or a fragment (they would send the fetch elsewhere than the repository)", async () => {
    const server = await serverWith({ allowed: `127.0.0.1:${canary.port}` })
    try {
      const labId = await userOf(server, server.adminKey).createLab("ssrf-suffix")
      for (const repo of [`${canary.origin}/x.git?`, `${canary.origin}/x.git?a=b`, `${canary.origin}/x.git#`, `${canary.origin}/x.git#frag`]) {
        const message = await expectError(await link(server, labId, repo), 422, "validation_error")
        expect(message, repo).toMatch(/^repo: /)
      }
      expect(canary.requests()).toEqual([])
    } finally {
      await server.close()
    }
  })
})
