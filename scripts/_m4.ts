import { PGlite } from "@electric-sql/pglite"
import { migrations } from "../src/db/Migrations.js"
const words = "alpha beta gamma delta epsilon model training loss gradient dataset sample batch layer network optimizer learning rate schedule result figure table paper method".split(" ")
const content = (i: number) => { let s = `# file ${i}\n`; let k = i + 1; while (s.length < 1500) { k = (k * 1103515245 + 12345) % 2147483648; s += words[k % words.length] + (k % 7 === 0 ? "\n" : " ") } return s }
const N = 10000
for (const mode of (process.argv[2] ?? "full").split(",")) {
  const db = await PGlite.create()
  for (const m of migrations) await db.exec(m.sql)
  await db.exec(`INSERT INTO labs VALUES ('lab', 'lab', 'Lab', 'team', now(), now())`)
  if (mode.includes("noq")) await db.exec(`ALTER TABLE files DISABLE TRIGGER search_queue_inserted`)
  if (mode.includes("nofk")) await db.exec(`ALTER TABLE files DROP CONSTRAINT files_lab_id_fkey`)
  if (mode.includes("noidx")) await db.exec(`DROP INDEX search_queue_order; DROP INDEX search_queue_lab_order`)
  const t0 = performance.now()
  await db.exec("BEGIN")
  for (let c = 0; c < N; c += 500) {
    const rows = Array.from({ length: 500 }, (_, k) => c + k)
    await db.query(`INSERT INTO files (lab_id, path, content, size, sha, source, from_git, created_at, updated_at) SELECT 'lab', p, b, 1500, 'sha', 'git', true, now(), now() FROM unnest($1::text[], $2::text[]) u(p, b)`, [rows.map(i => `/d${i % 100}/f${i}.md`), rows.map(i => content(i))])
  }
  await db.exec("COMMIT")
  console.log(mode, (performance.now() - t0).toFixed(0))
  await db.close()
}
