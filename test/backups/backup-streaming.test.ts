/**
 * A big lab's backup, download and restore (issue 21, item 2): each streams, so the process's memory grows by a
 * bound that does not depend on the lab's size (the lab here is several times that bound), and another lab's requests
 * keep their latency while the backup runs (against the same requests measured just before, in the same run).
 * Embedded PGlite on disk, or PostgreSQL when DATABASE_URL is set.
 */
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Backup as BackupSchema } from "../../src/backups/Backup.js"
import { data, eventually, type Fixture, startFixture } from "../support/LabFixture.js"

const Backup = Schema.encodedSchema(BackupSchema)
const PATH = "/api/v1/backups"
/** The lab: FILES files of about 1 MiB of text (hex words: gzip halves them). */
const FILES = 96
/** What a backup, a download or a restore may add to the process's peak memory, whatever the lab's size. */
const MEMORY_BOUND_MIB = 256
const url = process.env["DATABASE_URL"]

/** The process's resident memory now and at its peak since the last reset, in MiB (Linux /proc). */
const memory = () => {
  const status = readFileSync("/proc/self/status", "utf8")
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) / 1024
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") }
}
/** Reset VmHWM to the current RSS (Linux >= 4.0). */
const resetPeak = () => writeFileSync("/proc/self/clear_refs", "5")

let fx: Fixture
let dataDir: string | undefined

const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)
const quantile = (xs: ReadonlyArray<number>, q: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? Number.NaN

/** Another lab's reads, one after another `pauseMs` apart, until `until` settles: their latencies in ms. */
const otherTenant = async (until: Promise<unknown>, pauseMs = 10) => {
  let done = false
  void until.finally(() => (done = true)).catch(() => undefined)
  const latencies: Array<number> = []
  while (!done) {
    const started = performance.now()
    const response = await fx.get("/api/v1/tasks", { labId: fx.other.id, limit: 20 }, fx.stranger)
    const body = await response.text()
    expect(response.status, body.slice(0, 300)).toBe(200)
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  return latencies
}

/** `work`'s growth of the process's peak memory over its memory before, in MiB. */
const peakGrowth = async <A>(work: () => Promise<A>) => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const before = memory().rss
  resetPeak()
  const result = await work()
  return { result, growth: memory().hwm - before }
}

const get = async (id: string) => data(await fx.get(`${PATH}/${id}`, { labId: fx.lab.id }), Backup)

beforeAll(async () => {
  dataDir = url ? undefined : await mkdtemp(join(tmpdir(), "backup-streaming-"))
  fx = await startFixture("stream", dataDir === undefined ? {} : { database: { kind: "pglite", dataDir } }, url)
  for (let i = 0; i < 5; i++) await fx.post("/api/v1/tasks", { labId: fx.other.id, title: `task ${i}` }, fx.stranger)
  // the files, 8 per statement, written straight to the table (the triggers count them as any write)
  for (let first = 0; first < FILES; first += 8) {
    await fx.server.sql((sql) =>
      Effect.asVoid(sql`
        INSERT INTO files (lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
        SELECT ${fx.lab.id}, '/data/file-' || i || '.txt', c, octet_length(c), md5(c), 'api', false, now(), now()
        FROM generate_series(${first}::int, ${first + 7}::int) i,
             LATERAL (SELECT string_agg(md5(i::text || '-' || g::text), ' ') AS c FROM generate_series(1, 31000) g) x`)
    )
  }
}, 300_000)
afterAll(async () => {
  await fx?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe(`a lab of ${FILES} MiB (${url ? "PostgreSQL" : "PGlite"})`, () => {
  let backup: typeof Backup.Type

  it(`is backed up within ${MEMORY_BOUND_MIB} MiB more memory, another lab's reads served meanwhile as before`, { timeout: 600_000 }, async () => {
    const quiet = await otherTenant(new Promise((resolve) => setTimeout(resolve, 3_000)))
    const { result: busy, growth } = await peakGrowth(async () => {
      const started = data(await fx.post(PATH, { labId: fx.lab.id }), Backup, 202)
      const done = started.then(({ id }) =>
        eventually(async () => {
          const b = await get(id)
          expect(b.status).not.toBe("failed")
          return b.status === "completed" ? b : undefined
        }, 300_000)
      )
      const latencies = await otherTenant(done)
      backup = await done
      return latencies
    })
    expect(backup.tables["files"]).toBe(FILES)
    expect.soft(growth, `peak memory grew by ${growth.toFixed(0)} MiB`).toBeLessThan(MEMORY_BOUND_MIB)
    // the other lab's slowest reads during the backup against its slowest in quiet: a backup that held the database
    // made each of them wait for all of it (seconds, the backup's duration)
    const quietP95 = quantile(quiet, 0.95)
    const busyP95 = quantile(busy, 0.95)
    expect(busy.length, "reads served during the backup").toBeGreaterThan(10)
    expect(busyP95, `p95 ${busyP95.toFixed(0)} ms during the backup, ${quietP95.toFixed(0)} ms before`).toBeLessThan(
      5 * quietP95 + 100
    )
  })

  it(`is downloaded within ${MEMORY_BOUND_MIB} MiB more memory`, { timeout: 300_000 }, async () => {
    const { result, growth } = await peakGrowth(async () => {
      const response = await fx.get(`${PATH}/${backup.id}/download`, { labId: fx.lab.id })
      expect(response.status).toBe(200)
      const hash = createHash("sha256")
      let bytes = 0
      for await (const chunk of response.body ?? []) {
        hash.update(chunk)
        bytes += chunk.byteLength
      }
      return { bytes, sha256: hash.digest("hex") }
    })
    expect(result).toEqual({ bytes: backup.size, sha256: backup.sha256 })
    expect(growth, `peak memory grew by ${growth.toFixed(0)} MiB`).toBeLessThan(MEMORY_BOUND_MIB)
  })

  it(`is restored within ${MEMORY_BOUND_MIB} MiB more memory, another lab's reads served meanwhile as before, the lab's writes refused (409)`, { timeout: 600_000 }, async () => {
    await fx.server.sql((sql) => Effect.asVoid(sql`DELETE FROM files WHERE lab_id = ${fx.lab.id} AND path > '/data/file-3'`))
    // a fast backup (PostgreSQL) may have taken the other lab to its plan's rate limit (1,000 requests a minute, shared
    // by its keys): wait until it answers again, then a minute more for a whole budget
    let limited = false
    for (;;) {
      const response = await fx.get("/api/v1/tasks", { labId: fx.other.id, limit: 1 }, fx.stranger)
      await response.arrayBuffer()
      if (response.status !== 429) break
      limited = true
      await new Promise((resolve) => setTimeout(resolve, 2_000))
    }
    if (limited) await new Promise((resolve) => setTimeout(resolve, 61_000))
    // further apart than during the backup (at most 12 a second): the other lab stays under its 1,000 a minute
    const quiet = await otherTenant(new Promise((resolve) => setTimeout(resolve, 3_000)), 80)
    const { result, growth } = await peakGrowth(async () => {
      await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: fx.lab.id }), Backup, 202)
      const done = eventually(async () => {
        const b = await get(backup.id)
        expect(b.restore?.status).not.toBe("failed")
        return b.restore?.status === "completed" ? b : undefined
      }, 300_000)
      // a write to the lab while the restore puts it back: refused, naming the restore (one before the mark lands
      // in the lab and is replaced by the restore like any other row)
      const refused = eventually(async () => {
        const response = await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "during the restore" })
        const body: unknown = await response.json()
        return response.status === 409 ? body : undefined
      }, 300_000)
      const [busy, refusal] = await Promise.all([otherTenant(done, 80), refused])
      await done
      return { busy, refusal }
    })
    expect(JSON.stringify(result.refusal)).toContain(`is being restored from backup ${backup.id}; retry when the restore has ended`)
    const files = await fx.server.sql((sql) =>
      Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM files WHERE lab_id = ${fx.lab.id}`, (rows) => rows[0]?.n)
    )
    expect(files).toBe(FILES)
    expect(growth, `peak memory grew by ${growth.toFixed(0)} MiB`).toBeLessThan(MEMORY_BOUND_MIB)
    // the other lab's slowest reads during the restore against its slowest in quiet: a restore that held the
    // database (one transaction, on PGlite) made each of them wait for all of it (seconds). The allowance is one
    // statement of the search indexer, which indexes each restored file in one (on PGlite, a read waits for it)
    const quietP99 = quantile(quiet, 0.99)
    const busyP99 = quantile(result.busy, 0.99)
    expect(result.busy.length, "reads served during the restore").toBeGreaterThan(10)
    expect(busyP99, `p99 ${busyP99.toFixed(0)} ms during the restore, ${quietP99.toFixed(0)} ms before`).toBeLessThan(5 * quietP99 + 250)
    // the lab takes writes again
    const after = await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "after the restore" })
    expect(after.status).toBe(201)
    await after.arrayBuffer()
  })
})
