/**
 * Search benchmark: a lab of 10,000 documents of mixed kinds (files, tasks,
 * knowledge, memory, papers, experiments), seeded through the API, then a few
 * hundred varied GET /api/v1/search queries over HTTP, one at a time, timed
 * from the client: p50, p95, p99 and max per database. Target: p95 < 50 ms.
 *
 *   npm run bench:search
 *
 * Runs on in-memory PGlite, then on PostgreSQL when DATABASE_URL (or
 * postgres://postgres@127.0.0.1:5432/test) is reachable, in a fresh schema of
 * its own that is dropped at the end. The service runs in this process on a
 * loopback port; requests are sequential, so client and server never compete.
 * Knobs: BENCH_DOCS (10000), BENCH_QUERIES (400), BENCH_SEED (42).
 */
import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime, Option, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { availableParallelism, loadavg } from "node:os"
import * as App from "../layers/App.js"
import * as LocalProcessProvider from "../layers/pods/LocalProcessProvider.js"
import { percentile, prng } from "./bench/Report.js"
import { createSchema, describe } from "./bench/Util.js"

const DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/test"
const envInt = (name: string, fallback: number) => {
  const raw = process.env[name]
  const n = raw === undefined || raw === "" ? fallback : Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`)
  return n
}
const DOCS = envInt("BENCH_DOCS", 10_000)
const QUERIES = envInt("BENCH_QUERIES", 400)
const SEED = envInt("BENCH_SEED", 42)
const WARMUP = 30
const TARGET_P95_MS = 50
const SEED_CONCURRENCY = 4

// ---------------------------------------------------------------------------
// deterministic, realistic-looking text


const TOPIC_WORDS = (
  "transformer attention encoder decoder embedding tokenizer vocabulary gradient optimizer adam sgd momentum " +
  "learning rate warmup schedule cosine decay dropout regularization weight normalization layernorm batchnorm " +
  "convolution residual pooling activation relu gelu softmax logits loss cross entropy perplexity accuracy " +
  "precision recall benchmark dataset split validation test training inference latency throughput memory " +
  "gpu cuda kernel quantization pruning distillation sparsity mixture experts routing scaling law compute " +
  "parameter checkpoint finetuning pretraining corpus curriculum augmentation contrastive representation " +
  "diffusion sampler denoising variational autoencoder likelihood posterior prior bayesian uncertainty " +
  "calibration robustness adversarial perturbation generalization overfitting underfitting ablation baseline " +
  "hyperparameter sweep seed variance reproducibility evaluation metric reward reinforcement policy value " +
  "agent environment exploration retrieval augmented generation prompt instruction alignment preference " +
  "feedback annotation labeler graph node edge message passing spectral clustering manifold kernel manifold " +
  "protein folding molecule chemistry genomics imaging segmentation detection tracking speech audio vision " +
  "multimodal caption translation summarization reasoning arithmetic chain thought planning tool"
).split(/\s+/)

const RARE_WORDS = (
  "quokka zanzibar pangolin axolotl narwhal okapi ocelot tapir wombat kinkajou lemur marmoset capybara " +
  "platypus echidna dugong manatee aardvark bilby cassowary gharial ibex jerboa kakapo loris macaque numbat"
).split(/\s+/)

const FILLER = (
  "we the of and to in a is that for on with as by this are be from at an which it our results show " +
  "method approach model models using use used new than more most each both between under over after before " +
  "during while however therefore thus also only not but can may might should would could first second"
).split(/\s+/)

const rand = prng(SEED)
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(rand() * items.length)] as A
/** Zipf-ish: low indices far more often, so some words are in most documents and some in few. */
const zipf = <A>(items: ReadonlyArray<A>): A => items[Math.floor(items.length * rand() ** 2.5)] as A

const sentence = () => {
  const n = 8 + Math.floor(rand() * 14)
  const words: Array<string> = []
  for (let i = 0; i < n; i++) {
    const r = rand()
    words.push(r < 0.5 ? pick(FILLER) : r < 0.995 ? zipf(TOPIC_WORDS) : pick(RARE_WORDS))
  }
  const text = words.join(" ")
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
}
const paragraph = (sentences: number) => Array.from({ length: sentences }, sentence).join(" ")
const title = () => {
  const words = Array.from({ length: 3 + Math.floor(rand() * 6) }, () => zipf(TOPIC_WORDS)).join(" ")
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}`
}

type Doc = { readonly path: string; readonly body: Record<string, unknown> }

/** The mix: 30% files, 20% tasks, 15% knowledge, 15% memory, 10% papers, 10% experiments. */
const documents = (labId: string, agentId: string): ReadonlyArray<Doc> => {
  const docs: Array<Doc> = []
  for (let i = 0; i < DOCS; i++) {
    const slot = i % 20
    if (slot < 6) {
      const dir = pick(["notes", "papers/drafts", "experiments/logs", "src", "data/readme"])
      const sections = 1 + Math.floor(rand() * 5)
      const content = Array.from({ length: sections }, () => `## ${title()}\n\n${paragraph(3 + Math.floor(rand() * 6))}\n`).join("\n")
      docs.push({ path: "/api/v1/files", body: { labId, path: `/${dir}/${zipf(TOPIC_WORDS)}-${i}.md`, content: `# ${title()}\n\n${content}` } })
    } else if (slot < 10) {
      docs.push({ path: "/api/v1/tasks", body: { labId, title: title(), description: paragraph(1 + Math.floor(rand() * 3)) } })
    } else if (slot < 13) {
      docs.push({ path: "/api/v1/knowledge", body: { labId, title: title(), body: paragraph(3 + Math.floor(rand() * 8)) } })
    } else if (slot < 16) {
      docs.push({
        path: "/api/v1/memory",
        body: { labId, agentId, kind: pick(["observation", "fact", "plan", "reflection"]), content: paragraph(1 + Math.floor(rand() * 3)) }
      })
    } else if (slot < 18) {
      docs.push({ path: "/api/v1/papers", body: { labId, title: title(), abstract: paragraph(5 + Math.floor(rand() * 5)) } })
    } else {
      docs.push({
        path: "/api/v1/experiments",
        body: { labId, name: `${zipf(TOPIC_WORDS)}-${i}`, description: paragraph(2), hypothesis: sentence() }
      })
    }
  }
  return docs
}

/** A few hundred varied queries: common and rare words, pairs, phrases, or, exclusions, kinds filters, misses. */
type Query = { readonly category: string; readonly params: Record<string, string> }
const CATEGORIES = ["common word", "topic word", "rare word", "two words", "phrase", "or", "exclusion", "kinds filter", "three words", "no match"]

const queries = (): ReadonlyArray<Query> => {
  const out: Array<Query> = []
  const push = (i: number, params: Record<string, string>) => out.push({ category: CATEGORIES[i % 10] ?? "", params })
  const common = TOPIC_WORDS.slice(0, 30)
  for (let i = 0; i < QUERIES; i++) {
    switch (i % 10) {
      case 0:
        push(i, { q: pick(common) })
        break
      case 1:
        push(i, { q: pick(TOPIC_WORDS) })
        break
      case 2:
        push(i, { q: pick(RARE_WORDS) })
        break
      case 3:
        push(i, { q: `${pick(TOPIC_WORDS)} ${pick(TOPIC_WORDS)}` })
        break
      case 4:
        push(i, { q: `"${pick(common)} ${pick(TOPIC_WORDS)}"` })
        break
      case 5:
        push(i, { q: `${pick(TOPIC_WORDS)} or ${pick(RARE_WORDS)}` })
        break
      case 6:
        push(i, { q: `${pick(common)} -${pick(TOPIC_WORDS)}` })
        break
      case 7:
        push(i, { q: pick(TOPIC_WORDS), kinds: pick(["files", "papers,knowledge", "tasks,experiments", "memory"]) })
        break
      case 8:
        push(i, { q: `${pick(common)} ${pick(common)} ${pick(TOPIC_WORDS)}` })
        break
      default:
        push(i, { q: `nonexistentword${i}` })
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// the service, in this process

const Meta = Schema.Struct({ request_id: Schema.String, timestamp: Schema.String })
const Created = Schema.Struct({ data: Schema.Struct({ id: Schema.String }), meta: Meta })
const Results = Schema.Struct({
  data: Schema.Array(Schema.Struct({ kind: Schema.String, ref: Schema.String, rank: Schema.Number, snippet: Schema.String })),
  meta: Schema.Struct({ ...Meta.fields, next_cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean })
})

interface Service {
  readonly baseUrl: string
  readonly token: string
  readonly close: () => Promise<void>
}

const startService = async (database: App.AppSettings["database"]): Promise<Service> => {
  const token = `lsk_bench_${randomBytes(16).toString("hex")}`
  const settings: App.AppSettings = {
    port: 0,
    host: "127.0.0.1",
    database,
    redisUrl: Option.none(),
    adminKey: Redacted.make(token),
    masterKey: Redacted.make(randomBytes(32).toString("hex")),
    jwt: Option.none(),
    adminLimits: { perMinute: 1_000_000_000, perDay: 1_000_000_000 },
    publicBaseUrl: new URL("http://127.0.0.1"),
    git: { kind: "memory" },
    pods: { command: LocalProcessProvider.DEFAULT_COMMAND }
  }
  const layer: Layer.Layer<HttpServer.HttpServer, unknown> = App.server(settings)
  const runtime = ManagedRuntime.make(layer)
  const server = await runtime.runPromise(HttpServer.HttpServer)
  if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return { baseUrl: `http://127.0.0.1:${server.address.port}`, token, close: () => runtime.dispose() }
}

const call = async <A, I>(service: Service, method: string, path: string, schema: Schema.Schema<A, I>, body?: unknown): Promise<A> => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
  return Schema.decodeUnknownSync(Schema.parseJson(schema))(text)
}

const seed = async (service: Service) => {
  const lab = await call(service, "POST", "/api/v1/labs", Created, { slug: "bench-search", name: "Search bench", plan: "team" })
  const labId = lab.data.id
  const agent = await call(service, "POST", "/api/v1/agents", Created, { labId, name: "Bench agent", model: "bench-1" })
  const docs = documents(labId, agent.data.id)
  let next = 0
  const worker = async () => {
    for (;;) {
      const doc = docs[next++]
      if (doc === undefined) return
      await call(service, "POST", doc.path, Created.pipe(Schema.pick("meta")), doc.body)
    }
  }
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker))
  return labId
}


interface Figures {
  readonly db: string
  readonly seedSeconds: number
  readonly docs: number
  readonly queries: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
  readonly mean: number
  readonly meanResults: number
  readonly load: number
}

const run = async (db: string, database: App.AppSettings["database"]): Promise<Figures> => {
  const service = await startService(database)
  try {
    let started = performance.now()
    const labId = await seed(service)
    const seedSeconds = (performance.now() - started) / 1000
    console.log(`[${db}] seeded ${DOCS} documents through the API in ${seedSeconds.toFixed(1)} s`)
    const list = queries()
    const search = (params: Record<string, string>) =>
      call(service, "GET", `/api/v1/search?${new URLSearchParams({ labId, limit: "20", ...params }).toString()}`, Results)
    for (const query of list.slice(0, WARMUP)) await search(query.params)
    const times: Array<number> = []
    const byCategory = new Map<string, Array<number>>()
    let results = 0
    started = performance.now()
    for (const query of list) {
      const t0 = performance.now()
      const body = await search(query.params)
      const ms = performance.now() - t0
      times.push(ms)
      byCategory.set(query.category, [...(byCategory.get(query.category) ?? []), ms])
      results += body.data.length
    }
    console.log(
      `[${db}] p50/p95 ms by kind of query: ` +
        [...byCategory]
          .map(([category, ms]) => {
            const s = [...ms].sort((a, b) => a - b)
            return `${category} ${percentile(s, 50).toFixed(1)}/${percentile(s, 95).toFixed(1)}`
          })
          .join(", ")
    )
    const sorted = [...times].sort((a, b) => a - b)
    const figures: Figures = {
      db,
      seedSeconds,
      docs: DOCS,
      queries: list.length,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? NaN,
      mean: times.reduce((a, b) => a + b, 0) / times.length,
      meanResults: results / list.length,
      load: loadavg()[0] ?? NaN
    }
    console.log(
      `[${db}] ${list.length} queries in ${((performance.now() - started) / 1000).toFixed(1)} s: p50 ${figures.p50.toFixed(1)} ms, ` +
        `p95 ${figures.p95.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms, max ${figures.max.toFixed(1)} ms`
    )
    return figures
  } finally {
    await service.close()
  }
}

// ---------------------------------------------------------------------------
// PostgreSQL: a fresh schema, or nothing when the server is unreachable

const postgres = async (): Promise<{ readonly url: string; readonly drop: () => Promise<void> } | undefined> =>
  createSchema(process.env["DATABASE_URL"] || DEFAULT_PG_URL, "bench_search").catch((error: unknown) => {
    console.log(`PostgreSQL is unreachable (${describe(error)}): PGlite only.`)
    return undefined
  })

const main = async () => {
  console.log(`Search benchmark: ${DOCS} documents, ${QUERIES} queries (seed ${SEED}), ${availableParallelism()} CPUs, load ${loadavg()[0]?.toFixed(1)}`)
  const rows: Array<Figures> = []
  rows.push(await run("pglite", { kind: "pglite", dataDir: undefined }))
  const pgdb = await postgres()
  if (pgdb) {
    try {
      rows.push(await run("postgresql", { kind: "postgresql", url: Redacted.make(pgdb.url) }))
    } finally {
      await pgdb.drop()
    }
  }
  console.log("\n| db | documents | queries | p50 ms | p95 ms | p99 ms | max ms | mean ms | results/query | seed s | load |")
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    console.log(
      `| ${r.db} | ${r.docs} | ${r.queries} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ` +
        `${r.mean.toFixed(1)} | ${r.meanResults.toFixed(1)} | ${r.seedSeconds.toFixed(0)} | ${r.load.toFixed(1)} |`
    )
  }
  const failed = rows.filter((r) => r.p95 >= TARGET_P95_MS)
  console.log(
    failed.length === 0
      ? `\nPASS: p95 < ${TARGET_P95_MS} ms on ${rows.map((r) => r.db).join(" and ")}`
      : `\nFAIL: p95 >= ${TARGET_P95_MS} ms on ${failed.map((r) => r.db).join(", ")}`
  )
  process.exitCode = failed.length === 0 ? 0 : 1
}

await Effect.runPromise(Effect.promise(main))
