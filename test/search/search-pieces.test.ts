/**
 * A long file is indexed by the background indexer in pieces, a statement each (src/search/SearchPieces.ts), so that
 * on PGlite no request waits a quarter of a second behind one file's indexing. The document it writes holds the same
 * words, at the same weights, as the one search_put writes over the whole text in one statement, and the file is
 * found by a word near the end of its indexed text. (Positions may differ: a lexeme keeps at most 256 of them, and
 * stop words at the end of a piece are not counted.) PGlite; PostgreSQL too with DATABASE_URL (a fresh schema).
 */
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pieces } from "../../src/search/SearchPieces.js"
import { type Fixture, page, startFixture, waitFor } from "../support/LabFixture.js"

describe("pieces of a text", () => {
  it("join back to the text, each at most the size asked, cut after a separator when one is near", () => {
    const text = Array.from({ length: 3000 }, (_, i) => `word${i}${i % 7 === 0 ? ".\n" : " "}`).join("")
    const parts = pieces(text, 1000)
    expect(parts.join("")).toBe(text)
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(1000)
    for (const part of parts.slice(0, -1)) expect(part).toMatch(/[\s.]$/)
    // no separator at all: cut at the size, never inside a surrogate pair
    const emoji = "😀".repeat(1500)
    const cut = pieces(emoji, 1001)
    expect(cut.join("")).toBe(emoji)
    for (const part of cut) expect(part.length % 2).toBe(0)
  })
})

const Result = Schema.Struct({ kind: Schema.String, ref: Schema.String })
const Same = Schema.Array(Schema.Struct({ queued: Schema.Number, sameWords: Schema.NullOr(Schema.Boolean), sameBody: Schema.NullOr(Schema.Boolean) }))

const suite = (name: string, databaseUrl: string | undefined) =>
  describe(`a long file in the search index (${name})`, () => {
    let fx: Fixture
    beforeAll(async () => {
      const database = databaseUrl === undefined ? { database: { kind: "pglite" as const, dataDir: undefined } } : {}
      fx = await startFixture(`pieces-${name}`, database, databaseUrl)
    }, 60_000)
    afterAll(() => fx?.close())

    it("is indexed in the background as search_put indexes it whole, and found by a word near its end", { timeout: 120_000 }, async () => {
      const words = Array.from({ length: 4_800 }, (_, i) => `term${(i * 7919) % 5003} the_${i % 13}/x.${i % 29}`)
      const text = `${words.join(" ")} finally a zeugmatic ending`
      expect(text.length).toBeGreaterThan(90_000)
      expect(text.length).toBeLessThan(100_000)
      const path = "/notes/long-enough.md"
      expect((await fx.post("/api/v1/files", { labId: fx.lab.id, path, content: text })).status).toBe(201)
      const compare = () =>
        fx.server.sql((sql) =>
          Effect.flatMap(
            sql`SELECT (SELECT count(*)::int FROM search_queue WHERE lab_id = ${fx.lab.id}) AS queued,
                  (SELECT tsvector_to_array(d.tsv) = tsvector_to_array(whole.tsv)
                      AND array(SELECT DISTINCT (u.lexeme, w) FROM unnest(d.tsv) u, unnest(u.weights) w ORDER BY 1)
                        = array(SELECT DISTINCT (u.lexeme, w) FROM unnest(whole.tsv) u, unnest(u.weights) w ORDER BY 1)
                   FROM search_documents d, files f,
                     LATERAL (SELECT setweight(to_tsvector('english', search_text(f.path || ' ' || regexp_replace(f.path, '[/._-]+', ' ', 'g'))), 'A')
                       || setweight(to_tsvector('english', search_text(left(f.content, 100000))), 'B') AS tsv) whole
                   WHERE d.lab_id = ${fx.lab.id} AND d.kind = 'files' AND d.ref = ${path} AND f.lab_id = d.lab_id AND f.path = ${path}) AS same_words,
                  (SELECT d.body = f.content FROM search_documents d JOIN files f ON f.lab_id = d.lab_id AND f.path = d.ref COLLATE "C"
                   WHERE d.lab_id = ${fx.lab.id} AND d.ref = ${path}) AS same_body`,
            Schema.decodeUnknown(Same)
          )
        )
      // the background indexer takes it (no search asked for it yet)
      const [indexed] = await waitFor("the background indexer", compare, (rows) => rows[0]?.queued === 0, 60_000)
      expect(indexed).toEqual({ queued: 0, sameWords: true, sameBody: true })
      const found = await page(await fx.get("/api/v1/search", { labId: fx.lab.id, q: "zeugmatic" }), Result)
      expect(found.data.map((r) => r.ref)).toEqual([path])
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]

suite("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") suite("postgresql", postgresUrl)
