/**
 * A restore meets the stored-bytes quota (issue 21, item 3): with the quota at 64 KiB, restoring an older backup
 * whose files would take the lab past it is refused (403 quota_exceeded when asked for; a failed restore naming the
 * quota for a backup from before the files' bytes were noted), and the lab is left as it was.
 * PGlite, or PostgreSQL when DATABASE_URL is set.
 */
import { Effect, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Backup } from "../../src/backups/Backup.js"
import { DEFAULT_QUOTAS } from "../../src/quotas/PlanQuotas.js"
import { data, expectError, type Fixture, startFixture, waitFor } from "../support/LabFixture.js"

const LIMIT = 64 * 1024
let fx: Fixture

beforeAll(async () => {
  fx = await startFixture(
    "rquota",
    { quotas: { ...DEFAULT_QUOTAS, team: { ...DEFAULT_QUOTAS.team, storedBytes: LIMIT } } },
    process.env["DATABASE_URL"]
  )
}, 120_000)
afterAll(() => fx?.close())

const write = (path: string, content: string) => fx.post("/api/v1/files", { labId: fx.lab.id, path, content })
const backupOf = async () => {
  const started = await data(await fx.post("/api/v1/backups", { labId: fx.lab.id }), Backup, 202)
  return waitFor(
    `backup ${started.id}`,
    async () => data(await fx.get(`/api/v1/backups/${started.id}`, { labId: fx.lab.id }), Backup),
    (b) => b.status === "completed" || b.status === "failed",
    30_000
  )
}
/** The lab's files (path and size) and its stored bytes as the quota counts them (files' counter and archives). */
const state = () =>
  fx.server.sql((sql) =>
    Effect.gen(function* () {
      const files = yield* sql<{ path: string; size: number }>`SELECT path, size FROM files WHERE lab_id = ${fx.lab.id} ORDER BY path`
      const [stored] = yield* sql<{ n: string }>`
        SELECT ((SELECT file_bytes FROM lab_usage WHERE lab_id = ${fx.lab.id})
              + (SELECT COALESCE(sum(size), 0) FROM backups WHERE lab_id = ${fx.lab.id}))::text AS n`
      return { files: files.map((f) => `${f.path}:${f.size}`), stored: Number(stored?.n) }
    })
  )

describe(`a restore and the stored-bytes quota (${LIMIT} bytes)`, () => {
  it("refuses a restore that would take the lab past it, and changes nothing", { timeout: 120_000 }, async () => {
    // an old backup of 60,000 bytes of files (its archive is small: the content compresses well)
    for (const name of ["a", "b"]) expect((await write(`/${name}.md`, name.repeat(30_000))).status).toBe(201)
    const old = await backupOf()
    expect(old.status).toBe("completed")
    // since: those files deleted, a smaller one written and backed up (random text: its archive takes room too)
    for (const name of ["a", "b"]) expect((await fx.del("/api/v1/files", { labId: fx.lab.id, path: `/${name}.md` })).status).toBe(200)
    expect((await write("/r.md", randomBytes(6_000).toString("base64"))).status).toBe(201)
    expect((await backupOf()).status).toBe("completed")
    const before = await state()
    expect(before.stored).toBeLessThan(LIMIT)
    // the old files back in place of the new one, with both archives kept, would not fit
    expect(60_000 + before.stored - 8_000).toBeGreaterThan(LIMIT)

    const refused = await expectError(await fx.post(`/api/v1/backups/${old.id}/restore`, { labId: fx.lab.id }), 403, "quota_exceeded")
    expect(refused).toMatch(/stored bytes/)
    expect(refused).toMatch(/this restore/)
    expect(await state()).toEqual(before)
    expect((await data(await fx.get(`/api/v1/backups/${old.id}`, { labId: fx.lab.id }), Backup)).restore).toBeNull()

    // a backup from before its files' bytes were noted: the restore's own check refuses it, and the lab stays as it was
    await fx.server.sql((sql) => Effect.asVoid(sql`UPDATE backups SET file_bytes = NULL WHERE id = ${old.id}`))
    await data(await fx.post(`/api/v1/backups/${old.id}/restore`, { labId: fx.lab.id }), Backup, 202)
    const failed = await waitFor(
      "the restore",
      async () => data(await fx.get(`/api/v1/backups/${old.id}`, { labId: fx.lab.id }), Backup),
      (b) => b.restore?.status === "completed" || b.restore?.status === "failed",
      30_000
    )
    expect(failed.restore).toMatchObject({ status: "failed" })
    expect(failed.restore?.error).toMatch(/quota exceeded: stored bytes/)
    expect(await state()).toEqual(before)

    // with room made (the newer backup deleted), the same restore goes through
    const newer = (await state()).files
    expect(newer).toEqual(["/r.md:8000"])
    const backups = await fx.server.sql((sql) =>
      Effect.flatMap(sql`SELECT id FROM backups WHERE lab_id = ${fx.lab.id} AND id <> ${old.id}`, Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String }))))
    )
    for (const b of backups) expect((await fx.del(`/api/v1/backups/${b.id}`, { labId: fx.lab.id })).status).toBe(200)
    await data(await fx.post(`/api/v1/backups/${old.id}/restore`, { labId: fx.lab.id }), Backup, 202)
    await waitFor(
      "the restore",
      async () => data(await fx.get(`/api/v1/backups/${old.id}`, { labId: fx.lab.id }), Backup),
      (b) => b.restore?.status === "completed" && b.restore.requestedAt !== failed.restore?.requestedAt,
      30_000
    )
    const after = await state()
    expect(after.files).toEqual(["/a.md:30000", "/b.md:30000"])
    expect(after.stored).toBeLessThanOrEqual(LIMIT)
  })
})
