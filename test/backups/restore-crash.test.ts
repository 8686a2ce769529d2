/**
 * A restore whose process dies while it puts the lab back in steps (issue 21, item 2): the service runs as its own
 * process, is SIGKILLed once the restore has marked the lab (the `backup.restore_applying` entry) and started again on
 * the same data. The restarted service finishes the restore (on PGlite at start, the only process of its data; on
 * PostgreSQL once the mark's heartbeat is stale): the lab ends as archived, the restore completed, its writes open.
 * On PGlite on disk, and on PostgreSQL when DATABASE_URL is set.
 */
import { Redacted, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Backup } from "../../src/backups/Backup.js"
import { freshDatabase } from "../support/LabFixture.js"
import { startServiceProcess, type ServiceProcess } from "../support/ServiceProcess.js"
import { fixedKeys, sleep, until, userOf } from "../support/SyncSupport.js"

/** FILES files of about FILE_BYTES each: the apply takes long enough to be killed in its middle. */
const FILES = 60
const FILE_BYTES = 384 * 1024
/** How long a start may take: on a loaded 2-core machine, loading the service's TypeScript took over 60 s. */
const READY_MS = 180_000

const temp: Array<string> = []
const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  for (const dir of temp) await rm(dir, { recursive: true, force: true })
})

const decodeEnvelope = Schema.decodeUnknownSync(Schema.Struct({ data: Schema.encodedSchema(Backup) }))
const decodeBackup = (body: unknown) => decodeEnvelope(body).data
const content = (i: number) => {
  const seed = createHash("sha256").update(`file ${i}`).digest("hex")
  return seed.repeat(Math.ceil(FILE_BYTES / seed.length)).slice(0, FILE_BYTES)
}

const crashMidApply = async (databaseUrl: string | undefined) => {
  const keys = fixedKeys()
  const dataDir = await mkdtemp(join(tmpdir(), "restore-crash-"))
  temp.push(dataDir)
  const settings = { dataDir, adminKey: keys.adminKey, masterKey: keys.masterKey, databaseUrl }
  const track = (service: ServiceProcess) => {
    cleanups.push(() => service.stop("SIGKILL"))
    return service
  }
  const call = async (service: ServiceProcess, method: string, path: string, body?: unknown) => {
    const response = await service.request(method, path, body === undefined ? { token: keys.adminKey } : { token: keys.adminKey, json: body })
    return { status: response.status, body: (await response.json()) as unknown }
  }
  const backupOf = async (service: ServiceProcess, labId: string, id: string) => {
    const { status, body } = await call(service, "GET", `/api/v1/backups/${id}?labId=${labId}`)
    expect(status, JSON.stringify(body)).toBe(200)
    return decodeBackup(body)
  }
  const tasksOf = async (service: ServiceProcess, labId: string) => {
    const { body } = await call(service, "GET", `/api/v1/tasks?labId=${labId}&limit=100`)
    return Schema.decodeUnknownSync(Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String, title: Schema.String })) }))(body)
      .data.map((t) => `${t.id} ${t.title}`)
      .sort()
  }

  const first = track(await startServiceProcess(settings, READY_MS))
  const user = userOf(first, keys.adminKey)
  const labId = await user.createLab(`restore-crash-${randomBytes(3).toString("hex")}`)
  for (let i = 0; i < FILES; i++) await user.writeOk(labId, `/data/f${String(i).padStart(3, "0")}.txt`, content(i))
  for (let i = 0; i < 5; i++) expect((await call(first, "POST", "/api/v1/tasks", { labId, title: `task ${i}` })).status).toBe(201)
  const archivedFiles = (await user.files(labId)).map((f) => `${f.path} ${f.size}`).sort()
  const archivedTasks = await tasksOf(first, labId)

  const asked = await call(first, "POST", "/api/v1/backups", { labId })
  expect(asked.status, JSON.stringify(asked.body)).toBe(202)
  const started = decodeBackup(asked.body)
  await until(async () => ((await backupOf(first, labId, started.id)).status === "completed" ? true : undefined), "the backup", 120_000)
  // the lab changes after the backup: the restore has rows to delete and rows to put back
  for (let i = 0; i < FILES; i += 2) await user.removeOk(labId, `/data/f${String(i).padStart(3, "0")}.txt`)
  expect((await call(first, "POST", "/api/v1/tasks", { labId, title: "after the backup" })).status).toBe(201)

  expect((await call(first, "POST", `/api/v1/backups/${started.id}/restore`, { labId })).status).toBe(202)
  await until(
    async () => ((await user.activity(labId)).some((a) => a.kind === "backup.restore_applying" && a.ref === started.id) ? true : undefined),
    "the restore's mark",
    120_000,
    20
  )
  await sleep(150)
  expect(await first.stop("SIGKILL")).toBeNull()

  const second = track(await startServiceProcess(settings, READY_MS))
  const restored = await until(
    async () => {
      const b = await backupOf(second, labId, started.id)
      return b.restore?.status === "completed" || b.restore?.status === "failed" ? b : undefined
    },
    "the restore finished by the restarted service",
    180_000,
    200
  )
  expect(restored.restore?.error ?? null).toBeNull()
  expect(restored.restore?.status).toBe("completed")
  expect(second.output()).toContain("its runner stopped after marking the lab; finishing it")
  expect((await userOf(second, keys.adminKey).files(labId)).map((f) => `${f.path} ${f.size}`).sort()).toEqual(archivedFiles)
  expect(await tasksOf(second, labId)).toEqual(archivedTasks)
  // the mark is gone: the lab takes writes again
  expect((await call(second, "POST", "/api/v1/tasks", { labId, title: "after the restore" })).status).toBe(201)
  await second.stop("SIGTERM")
}

const DATABASES: ReadonlyArray<readonly [string, string | undefined]> = [
  ["PGlite", undefined],
  ...(process.env["DATABASE_URL"] ? [["PostgreSQL", process.env["DATABASE_URL"]] as const] : [])
]

describe.each(DATABASES)("a restore killed while it puts the lab back (%s)", (_db, baseUrl) => {
  it("is finished by the restarted service: the lab as archived, the restore completed, the mark gone", async () => {
    let url: string | undefined
    if (baseUrl !== undefined) {
      const fresh = await freshDatabase(baseUrl)
      cleanups.push(fresh.drop)
      const db = fresh.settings?.database
      url = db?.kind === "postgresql" ? Redacted.value(db.url) : undefined
    }
    await crashMidApply(url)
  }, 420_000)
})
