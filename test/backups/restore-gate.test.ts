/**
 * The restore gate (migration 15): while a restore puts a lab back in steps, the lab's writes to the tables it replaces
 * are refused (409 conflict naming the lab and the backup), its reads are served, other labs are not concerned; and
 * every table with a lab_id has the gate unless a restore does not replace it (so a table added later cannot forget
 * it). The mark is written straight to lab_restores here, as a restore's first transaction does.
 * PGlite, or PostgreSQL when DATABASE_URL is set.
 */
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EXCLUDED_TABLES, RESTORE_POLICY } from "../../src/backups/ArchiveSchema.js"
import { expectError, type Fixture, startFixture } from "../support/LabFixture.js"

let fx: Fixture

beforeAll(async () => {
  fx = await startFixture("rgate", {}, process.env["DATABASE_URL"])
}, 120_000)
afterAll(() => fx?.close())

const Rows = Schema.Array(Schema.Struct({ tableName: Schema.String, events: Schema.Array(Schema.String) }))

/** The tables a restore does not replace, so without the gate: not archived, merged, or kept. */
const UNGATED = [...Object.keys(EXCLUDED_TABLES), ...Object.keys(RESTORE_POLICY)].sort()

describe("the restore gate", () => {
  it("is on every table with a lab_id a restore replaces, for inserts, updates and deletes; no other table with a lab_id has it", async () => {
    const tables = await fx.server.sql((sql) =>
      Effect.flatMap(
        sql`
          SELECT c.table_name,
            COALESCE((SELECT json_agg(t.tgname ORDER BY t.tgname)::text FROM pg_trigger t JOIN pg_class k ON k.oid = t.tgrelid
                      JOIN pg_namespace n ON n.oid = k.relnamespace
                      WHERE n.nspname = current_schema() AND k.relname = c.table_name AND t.tgname LIKE 'lab_restore_gate_%'), '[]') AS events
          FROM information_schema.columns c
          JOIN information_schema.tables x ON x.table_schema = c.table_schema AND x.table_name = c.table_name
          WHERE c.table_schema = current_schema() AND c.column_name = 'lab_id' AND x.table_type = 'BASE TABLE'
          ORDER BY c.table_name`,
        (rows) => Schema.decodeUnknown(Rows)(rows.map((r) => ({ ...r, events: JSON.parse(String(r["events"])) as unknown })))
      )
    )
    const ungated = tables.filter((t) => t.events.length === 0).map((t) => t.tableName)
    // a table with a lab_id that is neither gated nor listed as one a restore leaves alone: give it the gate
    // (lab_restore_gate_on in its migration) or list it in EXCLUDED_TABLES / RESTORE_POLICY
    expect(ungated.filter((t) => !UNGATED.includes(t))).toEqual([])
    for (const table of tables.filter((t) => !UNGATED.includes(t.tableName))) {
      expect(table.events, table.tableName).toEqual(["lab_restore_gate_deleted", "lab_restore_gate_inserted", "lab_restore_gate_updated"])
    }
    // and a table a restore leaves alone is not gated: its writes go on during a restore
    expect(tables.filter((t) => UNGATED.includes(t.tableName) && t.events.length > 0).map((t) => t.tableName)).toEqual([])
    expect(tables.length).toBeGreaterThan(UNGATED.length)
  })

  it("answers a write to a lab being restored 409 naming the restore; reads go on, other labs write, and the lab writes again after", async () => {
    const created = await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "before" })
    expect(created.status).toBe(201)
    const { data: task } = (await created.json()) as { data: { id: string } }
    const backupId = "bkp_gate_test"
    await fx.server.sql((sql) =>
      Effect.asVoid(sql`INSERT INTO lab_restores (lab_id, backup_id, staged, heartbeat_at) VALUES (${fx.lab.id}, ${backupId}, '{}', now())`)
    )
    const refusal = `lab ${fx.lab.id} is being restored from backup ${backupId}; retry when the restore has ended`
    try {
      expect(await expectError(await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "during" }), 409, "conflict")).toBe(refusal)
      expect(await expectError(await fx.del(`/api/v1/tasks/${task.id}`, { labId: fx.lab.id }), 409, "conflict")).toBe(refusal)
      expect(await expectError(await fx.post("/api/v1/files", { labId: fx.lab.id, path: "/during.md", content: "x" }), 409, "conflict")).toBe(
        refusal
      )
      const read = await fx.get("/api/v1/tasks", { labId: fx.lab.id })
      expect(read.status).toBe(200)
      await read.arrayBuffer()
      const other = await fx.post("/api/v1/tasks", { labId: fx.other.id, title: "another lab" }, fx.stranger)
      expect(other.status).toBe(201)
      await other.arrayBuffer()
    } finally {
      await fx.server.sql((sql) => Effect.asVoid(sql`DELETE FROM lab_restores WHERE lab_id = ${fx.lab.id}`))
    }
    const after = await fx.post("/api/v1/tasks", { labId: fx.lab.id, title: "after" })
    expect(after.status).toBe(201)
    await after.arrayBuffer()
  })
})
