import { PGlite } from "@electric-sql/pglite"
import { afterEach, describe, expect, it } from "vitest"
import { migrations } from "../../src/db/Migrations.js"
import { CONFIG, SearchKinds } from "../../src/search/Sql.js"

/** The search migration on its own, against the real schema (migrations 1-3) or a hand-made one. */
let db: PGlite | undefined
afterEach(async () => {
  await db?.close()
  db = undefined
})

const migration = (id: number) => {
  const found = migrations.find((m) => m.id === id)
  if (found === undefined) throw new Error(`no migration ${id}`)
  return found.sql
}
const schema = migration(4)
const queueSchema = migration(5)
const queueVersionPerStatement = migration(6)
/** The tables search indexes, by kind. */
const INDEXED = [
  { kind: "files", table: "files" },
  { kind: "papers", table: "papers" },
  { kind: "knowledge", table: "knowledge" },
  { kind: "memory", table: "memory" },
  { kind: "tasks", table: "tasks" },
  { kind: "experiments", table: "experiments" }
]

const before = async () => {
  db = await PGlite.create()
  for (const m of migrations) if (m.id < 4 && m.sql.trim() !== "") await db.exec(m.sql)
  await db.exec(`INSERT INTO labs VALUES ('lab_1', 'one', 'One', 'team', now(), now())`)
  return db
}

const documents = async (db: PGlite) =>
  (await db.query<{ kind: string; ref: string; title: string }>(`SELECT kind, ref, title FROM search_documents ORDER BY kind, ref`)).rows

describe("the search migration", () => {
  it("indexes the kinds and uses the text search configuration that searches query with", () => {
    expect(INDEXED.map((t) => t.kind)).toEqual([...SearchKinds])
    for (const kind of SearchKinds) expect(schema).toContain(`'${kind}'`)
    expect(schema).toContain(`to_tsvector('${CONFIG}'`)
  })

  it("comes after every table it indexes: no later migration creates an indexed table", () => {
    for (const later of migrations.filter((m) => m.id > 5)) {
      for (const t of INDEXED) expect(later.sql, `migration ${later.id}`).not.toMatch(new RegExp(`CREATE TABLE\\s+${t.table}\\b`, "i"))
    }
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

describe("the search queue (migration 5)", () => {
  const drain = async (db: PGlite, lab: string | null, limit = 50) =>
    (await db.query<{ taken: number }>(`SELECT search_drain($1, $2) AS taken`, [lab, limit])).rows[0]?.taken
  const queued = async (db: PGlite) =>
    (await db.query<{ lab_id: string; ref: string }>(`SELECT lab_id, ref FROM search_queue ORDER BY version`)).rows

  const migrated = async () => {
    const db = await before()
    await db.exec(`INSERT INTO labs VALUES ('lab_2', 'two', 'Two', 'team', now(), now())`)
    await db.exec(schema)
    await db.exec(queueSchema)
    await db.exec(queueVersionPerStatement)
    return db
  }
  const writeFile = (db: PGlite, lab: string, path: string, content: string) =>
    db.query(
      `INSERT INTO files VALUES ($1, $2, $3, length($3), 'sha', 'git', true, now(), now())
       ON CONFLICT (lab_id, path) DO UPDATE SET content = EXCLUDED.content`,
      [lab, path, content]
    )

  it("queues written files instead of indexing them; draining indexes them, a lab at a time", async () => {
    const db = await migrated()
    await writeFile(db, "lab_1", "/a.md", "warmup schedule")
    await writeFile(db, "lab_2", "/b.md", "cosine decay")
    await writeFile(db, "lab_1", "/c.md", "label smoothing")
    await db.exec(`INSERT INTO tasks VALUES ('task_1', 'lab_1', 'A task', 'desc', 'todo', now(), now())`)
    // other kinds are still indexed by the writer
    expect(await documents(db)).toEqual([{ kind: "tasks", ref: "task_1", title: "A task" }])
    expect(await queued(db)).toEqual([
      { lab_id: "lab_1", ref: "/a.md" },
      { lab_id: "lab_2", ref: "/b.md" },
      { lab_id: "lab_1", ref: "/c.md" }
    ])
    expect(await drain(db, "lab_1", 1)).toBe(1)
    expect(await drain(db, "lab_1")).toBe(1)
    expect(await drain(db, "lab_1")).toBe(0)
    expect((await documents(db)).map((d) => d.ref)).toEqual(["/a.md", "/c.md", "task_1"])
    expect(await queued(db)).toEqual([{ lab_id: "lab_2", ref: "/b.md" }])
    expect(await drain(db, null)).toBe(1)
    const found = await db.query<{ ref: string }>(
      `SELECT ref FROM search_documents WHERE tsv @@ websearch_to_tsquery('english', 'decay')`
    )
    expect(found.rows).toEqual([{ ref: "/b.md" }])
  })

  it("gives the files of one statement one version, and a later write of a file a newer one", async () => {
    const db = await migrated()
    const versions = async () =>
      (await db.query<{ ref: string; version: string }>(`SELECT ref, version::text FROM search_queue ORDER BY ref`)).rows
    await db.query(
      `INSERT INTO files SELECT 'lab_1', p, 'text', 4, 'sha', 'git', true, now(), now() FROM unnest($1::text[]) p`,
      [["/a.md", "/b.md", "/c.md"]]
    )
    const first = await versions()
    expect(new Set(first.map((r) => r.version)).size).toBe(1)
    await writeFile(db, "lab_1", "/b.md", "changed")
    const second = await versions()
    expect(second.map((r) => r.ref)).toEqual(["/a.md", "/b.md", "/c.md"])
    expect(BigInt(second[1]?.version ?? 0)).toBeGreaterThan(BigInt(first[1]?.version ?? 0))
    expect([second[0]?.version, second[2]?.version]).toEqual([first[0]?.version, first[2]?.version])
  })

  it("indexes the newest content of a file written twice, and removes a deleted or moved file from the index at once", async () => {
    const db = await migrated()
    await writeFile(db, "lab_1", "/a.md", "first words")
    await drain(db, null)
    await writeFile(db, "lab_1", "/a.md", "second thoughts")
    await writeFile(db, "lab_1", "/a.md", "third attempt")
    expect(await queued(db)).toHaveLength(1)
    await drain(db, null)
    const body = await db.query<{ body: string }>(`SELECT body FROM search_documents WHERE ref = '/a.md'`)
    expect(body.rows).toEqual([{ body: "third attempt" }])
    // a write that leaves the indexed columns as they were queues nothing
    await db.exec(`UPDATE files SET size = 0, updated_at = now()`)
    await writeFile(db, "lab_1", "/a.md", "third attempt")
    expect(await queued(db)).toEqual([])

    await db.exec(`UPDATE files SET path = '/b.md' WHERE path = '/a.md'`)
    expect((await documents(db)).map((d) => d.ref)).toEqual([])
    await drain(db, null)
    expect((await documents(db)).map((d) => d.ref)).toEqual(["/b.md"])
    await writeFile(db, "lab_1", "/c.md", "queued then deleted")
    await db.exec(`DELETE FROM files`)
    expect(await documents(db)).toEqual([])
    // the queued entry of the deleted file is dropped without a document
    expect(await drain(db, null)).toBe(1)
    expect(await documents(db)).toEqual([])
    expect(await queued(db)).toEqual([])
  })
})
