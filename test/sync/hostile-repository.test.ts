import { Either } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Ceilings } from "../../layers/git/Fetch.js"
import { parseAllowedHosts } from "../../src/sync/HostPolicy.js"
import { userOf } from "../support/SyncSupport.js"
import { commit, object, pack, tree, zeroBlob } from "../support/CraftedPack.js"
import { diskGit } from "../support/DiskGit.js"
import { type FakeHost, servePack, startFakeHost } from "../support/FakeGitHost.js"
import { expectError, json } from "../support/http.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

/**
 * A hostile git host sends a decompression bomb: a pack of about 2 MB whose two
 * blobs each inflate to 1 GiB (on main this took the service from 1 GB to a
 * 4.2 GB peak). The service must index it within a small, documented memory
 * bound (README: "Git sync", ceilings), skip the blobs as over 1 MiB, and fail
 * a repository over a ceiling with a clear lastError.
 */
const GiB = 1024 ** 3
/** The README's bound for a fetch above the service's idle memory, whatever the repository (the test's own share included). */
const MEMORY_BOUND = 300 * 1024 * 1024

let host: FakeHost
let bombPack: Buffer
let tipId: string
let gitRoot: string

beforeAll(async () => {
  const a = zeroBlob(GiB, 1)
  const b = zeroBlob(GiB, 2)
  const notes = object("blob", Buffer.from("# notes kept beside the bomb\n"))
  const root = tree([
    { mode: "100644", name: "a.bin", id: a.id },
    { mode: "100644", name: "b.bin", id: b.id },
    { mode: "100644", name: "notes.md", id: notes.id }
  ])
  const tip = commit(root.id)
  bombPack = pack([tip, root, a, b, notes])
  tipId = tip.id
  host = await startFakeHost(servePack(tip.id, bombPack))
  gitRoot = await mkdtemp(join(tmpdir(), "lab-hostile-repo-"))
}, 60_000)
afterAll(async () => {
  await host.close()
  await rm(gitRoot, { recursive: true, force: true })
})

const withServer = async (ceilings: Ceilings | undefined, run: (server: TestServer) => Promise<void>) => {
  const allowedHosts = Either.getOrThrow(parseAllowedHosts(`127.0.0.1:${host.port}`))
  const root = await mkdtemp(join(gitRoot, "store-"))
  const server = await startTestServer({ git: diskGit(root, 60_000, { allowedHosts, ...(ceilings ? { ceilings } : {}) }) })
  try {
    await run(server)
  } finally {
    await server.close()
  }
}

/** Resident memory sampled every 10 ms while `run` runs: the highest reading above the one before. */
const peakGrowth = async (run: () => Promise<void>) => {
  global.gc?.()
  const before = process.memoryUsage().rss
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 10)
  try {
    await run()
  } finally {
    clearInterval(timer)
  }
  return Math.max(peak, process.memoryUsage().rss) - before
}

const linkLab = async (server: TestServer, slug: string) => {
  const user = userOf(server, server.adminKey)
  const labId = await user.createLab(slug)
  const response = await server.request("PATCH", "/api/v1/sync", {
    token: server.adminKey,
    json: { labId, repo: `${host.origin}/bomb.git` }
  })
  expect(response.status, JSON.stringify(await json(response.clone()))).toBe(200)
  return { user, labId }
}

describe("a hostile repository", () => {
  it("a decompression bomb is indexed within the memory bound: its 1 GiB blobs are skipped, the rest synced", async () => {
    expect(bombPack.length).toBeLessThan(3_000_000)
    await withServer(undefined, async (server) => {
      let labId = ""
      let user: ReturnType<typeof userOf> | undefined
      const growth = await peakGrowth(async () => {
        ;({ user, labId } = await linkLab(server, "bomb"))
        // the pull the link started, or this one: either way the tip is synced once this answers
        expect(await user.syncNow(labId)).toMatchObject({ ok: true, sha: tipId })
      })
      expect(await user?.paths(labId)).toEqual(["/notes.md"])
      expect((await user?.status(labId))?.lastError).toBeNull()
      const entry = (await user?.activity(labId))?.filter((a) => a.kind === "sync").at(-1) // the first sync: newest come first
      expect(entry?.message).toMatch(/: 1 added, 0 updated, 0 removed/)
      expect(entry?.data).toMatchObject({ skipped: 2 })
      console.log(`bomb: resident memory grew by ${Math.round(growth / 1024 / 1024)} MiB`)
      expect(growth, `resident memory grew by ${Math.round(growth / 1024 / 1024)} MiB`).toBeLessThan(MEMORY_BOUND)
    })
  }, 120_000)

  const overCeiling: ReadonlyArray<readonly [string, Ceilings, RegExp]> = [
    ["inflated bytes", { maxPackBytes: 1024 ** 3, maxObjects: 1000, maxInflatedBytes: 512 * 1024 ** 2 }, /inflates to more than 512 MiB.*GIT_MAX_INFLATED_BYTES/],
    ["pack bytes", { maxPackBytes: 1024 ** 2, maxObjects: 1000, maxInflatedBytes: 16 * GiB }, /pack is over 1 MiB.*GIT_MAX_PACK_BYTES/],
    ["objects", { maxPackBytes: 1024 ** 3, maxObjects: 3, maxInflatedBytes: 16 * GiB }, /5 objects, over the ceiling of 3 \(GIT_MAX_OBJECTS\)/]
  ]
  for (const [ceiling, ceilings, message] of overCeiling) {
    it(`a repository over the ${ceiling} ceiling fails that lab's sync with a clear lastError, memory flat`, async () => {
      await withServer(ceilings, async (server) => {
        const growth = await peakGrowth(async () => {
          const { user, labId } = await linkLab(server, `over-${ceiling.replace(" ", "-")}`)
          const failed = await expectError(await server.request("POST", "/api/v1/sync", { token: server.adminKey, json: { labId } }), 502, "bad_gateway")
          expect(failed).toMatch(message)
          const status = await user.status(labId)
          expect(status.lastError?.message).toMatch(message)
          expect(await user.paths(labId)).toEqual([])
        })
        expect(growth, `resident memory grew by ${Math.round(growth / 1024 / 1024)} MiB`).toBeLessThan(MEMORY_BOUND)
      })
    }, 120_000)
  }
})
