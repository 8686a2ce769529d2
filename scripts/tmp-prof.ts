import { PGlite } from "@electric-sql/pglite"
import { MAX_INDEXED_BODY } from "../src/search/Sql.js"

const rand = (() => { let a = 42; return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296 } })()
const TOPIC = "transformer attention encoder decoder embedding tokenizer vocabulary gradient optimizer adam sgd momentum learning rate warmup schedule cosine decay dropout regularization weight normalization layernorm batchnorm convolution residual pooling activation relu gelu softmax logits loss cross entropy perplexity accuracy precision recall benchmark dataset split validation test training inference latency throughput memory gpu cuda kernel quantization pruning distillation sparsity".split(" ")
const FILLER = "we the of and to in a is that for on with as by this are be from at an which it our results show method approach model".split(" ")
const pick = <A>(x: ReadonlyArray<A>) => x[Math.floor(rand() * x.length)] as A
const zipf = <A>(x: ReadonlyArray<A>) => x[Math.floor(x.length * rand() ** 2.5)] as A
const sentence = () => Array.from({ length: 8 + Math.floor(rand() * 14) }, () => (rand() < 0.5 ? pick(FILLER) : zipf(TOPIC))).join(" ") + "."
const para = (n: number) => Array.from({ length: n }, sentence).join(" ")

const db = await PGlite.create()
await db.exec(`CREATE TABLE search_documents (lab_id text, kind text, ref text, title text, body text, tsv tsvector, updated_at timestamptz, PRIMARY KEY (lab_id, kind, ref));
CREATE INDEX sd_tsv ON search_documents USING gin (tsv) WITH (fastupdate = off);`)
const t0 = performance.now()
for (let b = 0; b < 20; b++) {
  const rows = Array.from({ length: 500 }, (_, i) => {
    const n = b * 500 + i
    const body = n % 3 === 0 ? para(20) : para(4)
    return { ref: `r${n}`, title: para(1).slice(0, 60), body }
  })
  await db.query(`INSERT INTO search_documents SELECT 'lab1', 'tasks', x->>'ref', x->>'title', x->>'body',
    setweight(to_tsvector('english', x->>'title'), 'A') || setweight(to_tsvector('english', left(x->>'body', ${MAX_INDEXED_BODY})), 'B'), now()
    FROM json_array_elements($1::json) x`, [JSON.stringify(rows)])
}
console.log("seed", (performance.now() - t0).toFixed(0))
await db.exec("ANALYZE search_documents")
const time = async (label: string, sql: string, params: unknown[]) => {
  await db.query(sql, params)
  const t = performance.now()
  let n = 0
  for (let i = 0; i < 5; i++) n = (await db.query(sql, params)).rows.length
  console.log(label, ((performance.now() - t) / 5).toFixed(2), "ms", n)
}
for (const q of ["transformer", "sparsity", "gradient optimizer", "nonexistent"]) {
  console.log("==", q)
  await time("count", `SELECT count(*) FROM search_documents WHERE lab_id='lab1' AND tsv @@ websearch_to_tsquery('english', $1)`, [q])
  await time("rank_cd", `SELECT ref, ts_rank_cd(tsv, qq, 33) r FROM search_documents, websearch_to_tsquery('english', $1) qq WHERE lab_id='lab1' AND tsv @@ qq ORDER BY r DESC LIMIT 21`, [q])
  await time("rank", `SELECT ref, ts_rank(tsv, qq, 33) r FROM search_documents, websearch_to_tsquery('english', $1) qq WHERE lab_id='lab1' AND tsv @@ qq ORDER BY r DESC LIMIT 21`, [q])
  await time("headline20", `SELECT ts_headline('english', left(body, 20000), qq, 'MaxWords=35, MinWords=15') FROM (SELECT body FROM search_documents LIMIT 20) d, websearch_to_tsquery('english', $1) qq`, [q])
  await time("headline3000", `SELECT ts_headline('english', left(body, 3000), qq, 'MaxWords=35, MinWords=15') FROM (SELECT body FROM search_documents LIMIT 20) d, websearch_to_tsquery('english', $1) qq`, [q])
}
await db.exec("SET enable_seqscan = on")
for (const q of ["nonexistent", "sparsity"]) {
  const r = await db.query(`EXPLAIN ANALYZE SELECT count(*) FROM search_documents WHERE lab_id='lab1' AND tsv @@ websearch_to_tsquery('english', $1)`, [q])
  console.log(r.rows.map((x: any) => x["QUERY PLAN"]).join("\n"))
}
