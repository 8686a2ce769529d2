/**
 * The fuzz test: every operation of the OpenAPI document, driven over real HTTP
 * with values derived from the contract (effect's Arbitrary) and hostile ones
 * (test/support/Fuzz.ts), with the operator's key, lab keys and none. Whatever
 * is sent, the answer is never a 5xx, and every failure is exactly the error
 * envelope with the response's status. On PGlite always; on PostgreSQL too when
 * DATABASE_URL or E2E_DATABASE_URL is set (a fresh schema).
 *
 * FUZZ_SEED replays a run (the seed is printed on failure), FUZZ_RUNS sets the
 * number of random requests per database (default 3000: about half a
 * minute per database here, after a sweep of every operation).
 */
import { Schema } from "effect"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Context, type FuzzRequest, operations, request } from "../support/Fuzz.js"
import { type Fixture, startFixture } from "../support/LabFixture.js"

const RUNS = Number(process.env["FUZZ_RUNS"] ?? 3_000)
const SEED = process.env["FUZZ_SEED"] === undefined ? Date.now() % 2 ** 31 : Number(process.env["FUZZ_SEED"])

const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, status: Schema.Number })
}).annotations({ parseOptions: { onExcessProperty: "error" } })
const isEnvelope = Schema.is(ErrorEnvelope)

const Created = Schema.Struct({ data: Schema.Struct({ id: Schema.String }) })

/** One of each resource in the lab, so path ids sometimes name something real. */
const seed = async (fx: Fixture): Promise<Record<string, string>> => {
  const create = async (path: string, body: Record<string, unknown>) => {
    const response = await fx.post(`/api/v1/${path}`, { labId: fx.lab.id, ...body })
    const decoded = Schema.decodeUnknownSync(Created)(await response.json())
    return decoded.data.id
  }
  const agent = await create("agents", { name: "fuzz agent", model: "m" })
  const project = await create("projects", { name: "fuzz project" })
  const experiment = await create("experiments", { name: "fuzz experiment" })
  return {
    templates: await create("experiments/templates", { name: "fuzz template" }),
    queues: await create("experiments/queues", { name: "fuzz queue" }),
    agents: agent,
    memory: await create("memory", { agentId: agent, kind: "fact", content: "c" }),
    knowledge: await create("knowledge", { title: "k", body: "b" }),
    surveys: await create("surveys", { topic: "t" }),
    standups: await create("standups", { done: ["d"] }),
    projects: project,
    chats: await create("chats", { title: "c" }),
    papers: await create("papers", { title: "p" }),
    datasets: await create("datasets", { name: "d", format: "csv", uri: "https://example.org/d.csv" }),
    figures: await create("figures", { title: "f", path: "/figures/f.png", experimentId: experiment }),
    experiments: experiment,
    tasks: await create("tasks", { title: "t" }),
    pods: await create("pods", { name: "p", costPerHour: 1 }),
    backups: await create("backups", {})
  }
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Statuses seen per operation, printed with FUZZ_STATS=1 to judge how deep the requests reach. */
const statuses = new Map<string, Map<number, number>>()

/** Send it; the answer must not be a 5xx, and a failure must be exactly the envelope. */
const check = async (fx: Fixture, req: FuzzRequest) => {
  const tokens = { admin: fx.admin, writer: fx.writer, reader: fx.reader, none: undefined }
  const token = tokens[req.token]
  const response = await fetch(`${fx.server.baseUrl}${req.url}`, {
    method: req.method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(req.body === undefined ? {} : { "content-type": req.contentType ?? "application/json" }),
      ...req.headers
    },
    body: req.body,
    signal: AbortSignal.timeout(30_000)
  })
  const text = await response.text()
  const counts = statuses.get(req.operation) ?? new Map<number, number>()
  counts.set(response.status, (counts.get(response.status) ?? 0) + 1)
  statuses.set(req.operation, counts)
  const shown = `[FUZZ_SEED=${SEED}] ${req.method} ${req.url.slice(0, 300)} body=${(req.body ?? "").slice(0, 300)} token=${req.token} → ${response.status} ${text.slice(0, 300)}`
  expect(response.status, shown).toBeLessThan(500)
  if (response.status >= 400) {
    const body = parsed(text)
    expect(isEnvelope(body), shown).toBe(true)
    expect(isEnvelope(body) && body.error.status, shown).toBe(response.status)
  }
}

const fuzz = (name: string, databaseUrl: string | undefined) =>
  describe(`fuzz on ${name}`, () => {
    const ops = operations()
    let fx: Fixture
    let context: Context
    beforeAll(async () => {
      const database = databaseUrl === undefined ? { database: { kind: "pglite" as const, dataDir: undefined } } : {}
      fx = await startFixture(`fuzz-${name}`, database, databaseUrl)
      context = { labIds: [fx.lab.id, fx.lab.slug, fx.other.id], existing: await seed(fx) }
    }, 180_000)
    afterAll(async () => {
      if (process.env["FUZZ_STATS"] !== undefined) {
        for (const [op, counts] of [...statuses].sort()) console.log(op, JSON.stringify(Object.fromEntries(counts)))
      }
      statuses.clear()
      await fx?.close()
    })

    it("covers every operation of the OpenAPI document", () => {
      expect(ops.length).toBeGreaterThan(100)
      expect(new Set(ops.map((op) => op.id)).size).toBe(ops.length)
    })

    // pods.start only ever names the seeded pod (random ids are missing), so the fuzz starts at most one local process
    it("answers every operation's hostile requests without a 5xx, failures in the envelope", { timeout: 300_000 }, async () => {
      // every operation a few times first, so none is left to chance; then random operations
      const each = fc.tuple(...ops.map((op) => fc.array(request(op, context), { minLength: 3, maxLength: 3 })))
      const [sweep] = fc.sample(each, { numRuns: 1, seed: SEED })
      for (const req of (sweep ?? []).flat()) await check(fx, req)
      const any = fc.constantFrom(...ops).chain((op) => request(op, context))
      await fc.assert(
        fc.asyncProperty(any, (req) => check(fx, req)),
        { numRuns: RUNS, seed: SEED, endOnFailure: true }
      )
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]

console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`)
fuzz("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") fuzz("postgresql", postgresUrl)
