import { PGlite } from "@electric-sql/pglite"
import { afterEach, describe, expect, it } from "vitest"
import { migrations } from "../../src/db/Migrations.js"
import { INDEXED, schema } from "../../src/search/Sql.js"

/** The search migration on its own, against the real schema (migrations 1-3) or a hand-made one. */
let db: PGlite | undefined
afterEach(async () => {
  await db?.close()
  db = undefined
})

const before = async () => {
  db = await PGlite.create()
  for (const m of migrations) if (m.id < 4 && m.sql.trim() !== "") await db.exec(m.sql)
  await db.exec(`INSERT INTO labs VALUES ('lab_1', 'one', 'One', 'team', now(), now())`)
  return db
}

const documents = async (db: PGlite) =>
  (await db.query<{ kind: string; ref: string; title: string }>(`SELECT kind, ref, title FROM search_documents ORDER BY kind, ref`)).rows

describe("the search migration", () => {
  it("is migration 4, after every table it indexes", () => {
    const search = migrations.find((m) => m.sql === schema)
    expect(search?.id).toBe(Math.max(...migrations.map((m) => m.id)))
  })

  it("backfills the rows that exist, then follows inserts, updates and deletes of each indexed table", async () => {
    const db = await before()
    await db.exec(`
      INSERT INTO tasks VALUES ('task_1', 'lab_1', 'Old task about warmup', 'desc', 'todo', now(), now());
      INSERT INTO files VALUES ('lab_1', '/notes/old.md', 'old warmup notes', 16, 'sha', 'api', false, now(), now());`)
    await db.exec(schema)
    expect(await documents(db)).toEqual([
      { kind: "files", ref: "/notes/old.md", title: "/notes/old.md" },
      { kind: "tasks", ref: "task_1", title: "Old task about warmup" }
    ])
    await db.exec(`UPDATE tasks SET title = 'Renamed' WHERE id = 'task_1'`)
    await db.exec(`UPDATE tasks SET status = 'done' WHERE id = 'task_1'`)
    await db.exec(`UPDATE files SET path = '/notes/moved.md' WHERE path = '/notes/old.md'`)
    expect(await documents(db)).toEqual([
      { kind: "files", ref: "/notes/moved.md", title: "/notes/moved.md" },
      { kind: "tasks", ref: "task_1", title: "Renamed" }
    ])
    await db.exec(`DELETE FROM tasks; DELETE FROM files`)
    expect(await documents(db)).toEqual([])
  })

  it("creates a trigger for each of the six tables", async () => {
    const db = await before()
    await db.exec(schema)
    const tables = (
      await db.query<{ table: string }>(
        `SELECT DISTINCT c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgname LIKE 'search_index%' ORDER BY 1`
      )
    ).rows.map((r) => r.table)
    expect(tables).toEqual(INDEXED.map((t) => t.table).sort())
  })

  it("skips a table that does not exist, and refuses one that lacks an indexed column", async () => {
    db = await PGlite.create()
    await db.exec(`CREATE TABLE labs (id text PRIMARY KEY)`)
    await db.exec(`CREATE TABLE tasks (id text PRIMARY KEY, lab_id text, title text, description text)`)
    await db.exec(`CREATE TABLE knowledge (id text PRIMARY KEY, lab_id text, title text, text text)`)
    await expect(db.exec(schema)).rejects.toThrow(/search indexes knowledge\(id, title, body\) but the table has no body/)
    await db.exec(`ALTER TABLE knowledge RENAME COLUMN text TO body`)
    await db.exec(schema)
    await db.exec(`INSERT INTO labs VALUES ('l'); INSERT INTO knowledge VALUES ('kn_1', 'l', 'Title', 'Body text')`)
    expect(await documents(db)).toEqual([{ kind: "knowledge", ref: "kn_1", title: "Title" }])
  })
})
