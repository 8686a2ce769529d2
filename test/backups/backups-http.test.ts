import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { gunzipSync, gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Backup as BackupSchema } from "../../src/backups/Backup.js"
import { createdId, data, eventually, expectError, expectInvalid, type Fixture, MISSING, page, startFixture, walk, WithId } from "../support/LabFixture.js"

/** The JSON shape of a backup (ids and times as strings). */
const Backup = Schema.encodedSchema(BackupSchema)
type Backup = typeof Backup.Type
const SearchResult = Schema.Struct({ kind: Schema.String, ref: Schema.String })

const PATH = "/api/v1/backups"
/** Tables a snapshot leaves out. */
const NOT_ARCHIVED = ["backups", "outbox", "webhook_deliveries", "search_documents", "search_queue", "lab_usage", "lab_restores"]
/**
 * Archived, but a restore merges (activity, pod sessions: history) or keeps
 * (pods: live compute) them, so they are checked apart; lab_repos is checked
 * apart too (the sync worker writes its error fields at any time).
 */
const APART = ["activity", "pod_sessions", "pods", "lab_repos"]

let fx: Fixture
let backup: Backup
let before: Record<string, ReadonlyArray<string>>
let sealedToken: string | null
let podBefore: string

const get = async (id: string, token = fx.writer) => data(await fx.get(`${PATH}/${id}`, { labId: fx.lab.id }, token), Backup)
const completed = (id: string) =>
  eventually(async () => {
    const b = await get(id)
    expect(b.status).not.toBe("failed")
    return b.status === "completed" ? b : undefined
  })
const restored = (id: string, status: "completed" | "failed" = "completed") =>
  eventually(async () => {
    const b = await get(id)
    return b.restore?.status === status ? b : undefined
  })
/** The restore of backup `id` failed with an error that mentions `problem`. */
const restoreFailed = (id: string, problem: string) =>
  eventually(async () => {
    const b = await get(id)
    return b.restore?.status === "failed" && b.restore.error?.includes(problem) ? b : undefined
  })
/** Store `bytes` as backup `id`'s archive (in its chunks) with their SHA-256 (and their size, unless `keepSize`). */
const storeArchive = (id: string, bytes: Buffer, keepSize = false, keepSha = false) => {
  const sha = createHash("sha256").update(bytes).digest("hex")
  return fx.server.sql((sql) =>
    Effect.gen(function* () {
      yield* sql`DELETE FROM backup_chunks WHERE backup_id = ${id}`
      yield* sql`INSERT INTO backup_chunks (backup_id, seq, data) VALUES (${id}, 0, ${bytes})`
      if (!keepSha) yield* sql`UPDATE backups SET sha256 = ${sha} WHERE id = ${id}`
      if (!keepSize) yield* sql`UPDATE backups SET size = ${bytes.byteLength} WHERE id = ${id}`
    })
  )
}
const create = (path: string, body: Record<string, unknown>) => createdId(fx, path, body)
const search = async (q: string) =>
  (await page(await fx.get("/api/v1/search", { labId: fx.lab.id, q, limit: 100 }), SearchResult)).data.map((r) => `${r.kind}:${r.ref}`)

/** Every row of the lab, per table with a lab_id (but activity and the tables backups leave out), as sorted JSON. */
const snapshot = (labId: string) =>
  fx.server.sql((sql) =>
    Effect.gen(function* () {
      const tables = yield* sql<{ tableName: string }>`
        SELECT DISTINCT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'lab_id' ORDER BY 1`
      const out: Record<string, ReadonlyArray<string>> = {}
      for (const { tableName } of tables) {
        if (NOT_ARCHIVED.includes(tableName) || APART.includes(tableName)) continue
        const rows = yield* sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql.literal(`"${tableName}"`)} t WHERE t.lab_id = ${labId}`
        out[tableName] = rows.map((r) => r.row).sort()
      }
      return out
    })
  )

const tokenSealed = () =>
  fx.server.sql((sql) =>
    Effect.map(sql<{ tokenSealed: string | null }>`SELECT token_sealed FROM lab_repos WHERE lab_id = ${fx.lab.id}`, (r) => r[0]?.tokenSealed ?? null)
  )

const setState = (id: string, fields: string) =>
  fx.server.sql((sql) => Effect.asVoid(sql.unsafe(`UPDATE backups SET ${fields} WHERE id = $1`, [id])))

beforeAll(async () => {
  fx = await startFixture("backups")
  const lab = fx.lab.id
  await create("/api/v1/tasks", { title: "Keep me", description: "a task that survives" })
  await create("/api/v1/tasks", { title: "Delete me later", description: "gone after the backup, back after the restore" })
  for (const [path, content] of [
    ["/notes/keep.md", "# Keep\n\noriginal ocelot content\n"],
    ["/notes/edit.md", "before the edit\n"],
    ["/data/table.csv", "a,b\n1,2\n"]
  ]) {
    expect((await fx.post("/api/v1/files", { labId: lab, path, content })).status).toBe(201)
  }
  const agent = await create("/api/v1/agents", { name: "Ada", model: "claude-sonnet-4" })
  await create("/api/v1/memory", { agentId: agent, kind: "fact", content: "Warmup helps" })
  await create("/api/v1/knowledge", { title: "Warmup", body: "Use 500 steps." })
  await create("/api/v1/papers", { title: "A paper", abstract: "An abstract." })
  const template = await create("/api/v1/experiments/templates", { name: "sweep", defaults: { lr: 0.001 } })
  const experiment = await create("/api/v1/experiments", { templateId: template, name: "lr sweep", hypothesis: "lower is better" })
  await create("/api/v1/experiments/costs", { experimentId: experiment, amount: 1.25, category: "compute", source: "test" })
  expect((await fx.post("/api/v1/telemetry", { labId: lab, events: [{ name: "loss", value: 0.5, attributes: { step: 1 } }] })).status).toBe(201)
  expect((await fx.post("/api/v1/contributions", { labId: lab, agentId: agent, kind: "note", summary: "wrote notes" })).status).toBe(201)
  podBefore = await create("/api/v1/pods", { name: "gpu box", gpu: "A100", costPerHour: 1.5 })
  // a linked repository with a stored (sealed) token
  await fx.server.request("PATCH", "/api/v1/sync", { token: fx.writer, json: { labId: lab, repo: "https://git.example.com/o/r.git", token: "s3cret-token" } })
  sealedToken = await tokenSealed()
  expect(sealedToken).toMatch(/^v1:/)
  before = await snapshot(lab)
}, 180_000)
afterAll(() => fx.close())

describe("POST /api/v1/backups", () => {
  it("starts a backup (202, pending) that completes with its size, checksum and rows per table", async () => {
    const started = await data(await fx.post(PATH, { labId: fx.lab.slug }), Backup, 202)
    expect(started).toMatchObject({ labId: fx.lab.id, status: "pending", size: null, sha256: null, createdBy: fx.writerId, restore: null })
    expect(started.id).toMatch(/^bkp_/)
    backup = await completed(started.id)
    expect(backup.size).toBeGreaterThan(0)
    expect(backup.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(backup.startedAt).not.toBeNull()
    expect(backup.completedAt).not.toBeNull()
    for (const [table, rows] of Object.entries(before)) expect(backup.tables[table], table).toBe(rows.length)
    for (const table of NOT_ARCHIVED) expect(backup.tables[table]).toBeUndefined()
    expect(backup.tables["lab_repos"]).toBe(1)
    expect(backup.tables["activity"]).toBeGreaterThan(10)
    expect(Object.values(backup.tables).reduce((a, b) => a + b, 0)).toBe(backup.rows)
    const kinds = (await fx.activity()).filter((a) => a.ref === backup.id).map((a) => a.kind)
    expect(kinds).toEqual(["backup.completed", "backup.started", "backup.created"])
  })

  it("lists backups newest first, filtered by status and date, page by page", async () => {
    const second = await completed((await data(await fx.post(PATH, { labId: fx.lab.id }), Backup, 202)).id)
    const all = await walk(fx, PATH, { labId: fx.lab.id }, Backup, 1)
    expect(all.map((b) => b.id)).toEqual([second.id, backup.id])
    expect((await page(await fx.get(PATH, { labId: fx.lab.id, status: "failed" }), Backup)).data).toEqual([])
    expect((await page(await fx.get(PATH, { labId: fx.lab.id, to: second.createdAt }), Backup)).data.map((b) => b.id)).toEqual([backup.id])
    expect((await page(await fx.get(PATH, { labId: fx.other.id }, fx.stranger), Backup)).data).toEqual([])
    // deleting (extension) removes it, and says so in the feed
    expect((await data(await fx.del(`${PATH}/${second.id}`, { labId: fx.lab.id }), Backup)).id).toBe(second.id)
    await expectError(await fx.get(`${PATH}/${second.id}`, { labId: fx.lab.id }), 404, "not_found")
    expect((await fx.activity()).some((a) => a.kind === "backup.deleted" && a.ref === second.id)).toBe(true)
  })

  it("downloads the archive (extension): gzip'd NDJSON with a header, every row and a trailer", async () => {
    const response = await fx.get(`${PATH}/${backup.id}/download`, { labId: fx.lab.id })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/gzip")
    expect(response.headers.get("content-disposition")).toContain(`${fx.lab.slug}-${backup.id}.ndjson.gz`)
    const bytes = Buffer.from(await response.arrayBuffer())
    expect(bytes.byteLength).toBe(backup.size)
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(backup.sha256)
    const lines = gunzipSync(bytes).toString("utf8").trim().split("\n").map((l): unknown => JSON.parse(l))
    const Header = Schema.Struct({ format: Schema.Literal("lab-service-backup"), version: Schema.Literal(1), labId: Schema.String })
    expect(Schema.decodeUnknownSync(Header)(lines[0])).toMatchObject({ labId: fx.lab.id })
    const Row = Schema.Struct({ table: Schema.String, row: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
    const rows = lines.slice(1, -1).map((l) => Schema.decodeUnknownSync(Row)(l))
    expect(rows.length).toBe(backup.rows)
    const file = rows.find((r) => r.table === "files" && r.row["path"] === "/notes/keep.md")
    expect(file?.row["content"]).toBe("# Keep\n\noriginal ocelot content\n")
    // parents before children: templates, then experiments, then their costs
    const order = rows.map((r) => r.table)
    expect(order.indexOf("experiment_templates")).toBeLessThan(order.indexOf("experiments"))
    expect(order.indexOf("experiments")).toBeLessThan(order.indexOf("experiment_costs"))
    // secrets stay sealed
    expect(rows.find((r) => r.table === "lab_repos")?.row["token_sealed"]).toBe(sealedToken)
    expect(gunzipSync(bytes).toString("utf8")).not.toContain("s3cret-token")
    expect(lines.at(-1)).toMatchObject({ end: true, rows: backup.tables })
  })
})

describe("POST /api/v1/backups/{id}/restore", () => {
  it("puts every table of the lab back as archived, files, tasks and search included, keeping the activity history", async () => {
    const lab = fx.lab.id
    // change things
    const tasks = (await page(await fx.get("/api/v1/tasks", { labId: lab }), WithId)).data
    for (const t of tasks) expect((await fx.del(`/api/v1/tasks/${t.id}`, { labId: lab })).status).toBe(200)
    await create("/api/v1/tasks", { title: "Added after the backup" })
    expect((await fx.post("/api/v1/files", { labId: lab, path: "/notes/edit.md", content: "after the edit: pangolin\n" })).status).toBe(200)
    expect((await fx.del("/api/v1/files", { labId: lab, path: "/notes/keep.md" })).status).toBe(200)
    expect((await fx.post("/api/v1/files", { labId: lab, path: "/notes/new.md", content: "new file\n" })).status).toBe(201)
    await create("/api/v1/knowledge", { title: "Later knowledge", body: "later" })
    await create("/api/v1/experiments", { name: "later experiment" })
    expect((await fx.post("/api/v1/telemetry", { labId: lab, events: [{ name: "loss", value: 0.1 }] })).status).toBe(201)
    await fx.server.request("PATCH", "/api/v1/sync", { token: fx.writer, json: { labId: lab, repo: "https://git.example.com/o/r.git", token: null } })
    const podAfter = await create("/api/v1/pods", { name: "added later", costPerHour: 0.5 })
    expect(await search("pangolin")).toEqual(["files:/notes/edit.md"])
    expect(await search("ocelot")).toEqual([])
    expect(await snapshot(lab)).not.toEqual(before)
    const activityBefore = (await fx.activity()).map((a) => a.id)

    const asked = await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }), Backup, 202)
    expect(asked.restore).toMatchObject({ status: "pending", requestedBy: fx.writerId, completedAt: null })
    const done = await restored(backup.id)
    expect(done.restore).toMatchObject({ status: "completed", error: null })
    expect(done.restore?.rows).toBeGreaterThan(0)

    expect(await snapshot(lab)).toEqual(before)
    expect(await tokenSealed()).toBe(sealedToken)
    // pods are live compute: a restore leaves them as they are
    const pods = (await page(await fx.get("/api/v1/pods", { labId: lab }), WithId)).data.map((p) => p.id)
    expect(pods.sort()).toEqual([podBefore, podAfter].sort())
    // the search index follows the restored rows
    expect(await search("ocelot")).toEqual(["files:/notes/keep.md"])
    expect(await search("pangolin")).toEqual([])
    // history is kept: entries written since the backup are still there, and the restore is in it
    const activityAfter = await fx.activity()
    for (const id of activityBefore) expect(activityAfter.map((a) => a.id)).toContain(id)
    expect(activityAfter.filter((a) => a.ref === backup.id).map((a) => a.kind).slice(0, 4)).toEqual([
      "backup.restored",
      "backup.restore_applying",
      "backup.restore_started",
      "backup.restore_requested"
    ])
    // restoring again is allowed and changes nothing
    await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: fx.lab.slug }), Backup, 202)
    await eventually(async () => {
      const b = await get(backup.id)
      return b.restore?.status === "completed" && b.restore.requestedAt !== done.restore?.requestedAt ? b : undefined
    })
    expect(await snapshot(lab)).toEqual(before)
  })

  it("fails without changing anything when the archive is corrupt or does not fit the schema", async () => {
    const lab = fx.lab.id
    const now = await snapshot(lab)
    const response = await fx.get(`${PATH}/${backup.id}/download`, { labId: lab })
    const original = Buffer.from(await response.arrayBuffer())

    // bytes that do not match the checksum
    const corrupt = Buffer.from(original)
    corrupt[corrupt.length - 10] = (corrupt[corrupt.length - 10] ?? 0) ^ 0xff
    await storeArchive(backup.id, corrupt, true, true)
    await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }), Backup, 202)
    const failed = await restored(backup.id, "failed")
    expect(failed.restore?.error).toContain("SHA-256")
    expect(await snapshot(lab)).toEqual(now)
    expect((await fx.activity()).some((a) => a.kind === "backup.restore_failed" && a.ref === backup.id)).toBe(true)

    // bytes that match their checksum but are not gzip
    await storeArchive(backup.id, Buffer.from("not a gzip stream at all"), true)
    await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }), Backup, 202)
    const unreadable = await restoreFailed(backup.id, "cannot be read")
    expect(unreadable.restore?.error).toContain("the archive cannot be read")
    expect(await snapshot(lab)).toEqual(now)

    // a well-formed archive whose rows the schema refuses: found before the lab is changed
    const text = gunzipSync(original).toString("utf8").replace(/"status":"todo"/, '"status":"bogus"')
    await storeArchive(backup.id, gzipSync(Buffer.from(text, "utf8")))
    await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }), Backup, 202)
    const refused = await restoreFailed(backup.id, "refuses")
    expect(refused.restore?.error).toBe("tasks: the archive has a row this schema refuses (tasks_status_check)")
    expect(await snapshot(lab)).toEqual(now)

    // put the original back
    await storeArchive(backup.id, original)
  })

  it("enforces one backup or restore at a time per lab: repeats answer the same, others are 409", async () => {
    const lab = fx.lab.id
    // a backup in progress (as if its job were running)
    const running = await completed((await data(await fx.post(PATH, { labId: lab }), Backup, 202)).id)
    await setState(running.id, "status = 'running', completed_at = NULL")
    const again = await data(await fx.post(PATH, { labId: lab }), Backup, 202)
    expect(again).toMatchObject({ id: running.id, status: "running" })
    expect((await expectError(await fx.post(`${PATH}/${running.id}/restore`, { labId: lab }), 409, "conflict"))).toContain("running")
    expect(await expectError(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }), 409, "conflict")).toContain(running.id)
    await expectError(await fx.del(`${PATH}/${running.id}`, { labId: lab }), 409, "conflict")
    await expectError(await fx.get(`${PATH}/${running.id}/download`, { labId: lab }), 409, "conflict")
    await setState(running.id, "status = 'failed', error = 'test'")
    await expectError(await fx.post(`${PATH}/${running.id}/restore`, { labId: lab }), 409, "conflict")

    // a restore in progress
    await setState(backup.id, "restore_status = 'running'")
    const requests = (await fx.activity()).filter((a) => a.kind === "backup.restore_requested").length
    const same = await data(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }), Backup, 202)
    expect(same.restore?.status).toBe("running")
    expect((await fx.activity()).filter((a) => a.kind === "backup.restore_requested").length).toBe(requests)
    expect(await expectError(await fx.post(PATH, { labId: lab }), 409, "conflict")).toContain("restore")
    await expectError(await fx.del(`${PATH}/${backup.id}`, { labId: lab }), 409, "conflict")
    await setState(backup.id, "restore_status = 'completed'")
    expect((await data(await fx.del(`${PATH}/${running.id}`, { labId: lab }), Backup)).status).toBe("failed")
  })
})

describe("errors", () => {
  it("answers 422 for bad bodies and parameters", async () => {
    await expectInvalid(await fx.post(PATH, { labId: fx.lab.id, tables: ["tasks"] }), "tables")
    await expectInvalid(await fx.post(PATH, {}), "labId")
    await expectInvalid(await fx.post(`${PATH}/${backup.id}/restore`, { labId: fx.lab.id, force: true }), "force")
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, status: "done" }), "status")
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, cursor: "x" }), "cursor")
    await expectInvalid(await fx.get(PATH, { labId: fx.lab.id, from: "2025-01-02T00:00:00Z", to: "2025-01-01T00:00:00Z" }), "from")
  })

  it("answers 404 for a backup not in the lab, on every route", async () => {
    const lab = fx.lab.id
    await expectError(await fx.get(`${PATH}/${MISSING}`, { labId: lab }), 404, "not_found")
    await expectError(await fx.del(`${PATH}/${MISSING}`, { labId: lab }), 404, "not_found")
    await expectError(await fx.post(`${PATH}/${MISSING}/restore`, { labId: lab }), 404, "not_found")
    await expectError(await fx.get(`${PATH}/${MISSING}/download`, { labId: lab }), 404, "not_found")
    // another lab's backup is not this lab's
    await expectError(await fx.get(`${PATH}/${backup.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.post(`${PATH}/${backup.id}/restore`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(PATH, { labId: MISSING }, fx.server.adminKey), 404, "not_found")
  })

  it("answers 403 for a foreign lab, and for a read-only key on writes", async () => {
    const lab = fx.lab.id
    await expectError(await fx.get(PATH, { labId: lab }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(PATH, { labId: lab }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(`${PATH}/${backup.id}`, { labId: lab }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(`${PATH}/${backup.id}/download`, { labId: lab }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${PATH}/${backup.id}`, { labId: lab }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(PATH, { labId: lab }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(`${PATH}/${backup.id}/restore`, { labId: lab }, fx.reader), 403, "forbidden")
    // the archive carries the lab's sealed secrets: a read-only key may not download it
    await expectError(await fx.get(`${PATH}/${backup.id}/download`, { labId: lab }, fx.reader), 403, "forbidden")
    await expectError(await fx.del(`${PATH}/${backup.id}`, { labId: lab }, fx.reader), 403, "forbidden")
    expect((await get(backup.id, fx.reader)).id).toBe(backup.id)
  })
})
