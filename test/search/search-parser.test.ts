/**
 * Indexing a text costs time in proportion to its length, whatever its characters: PostgreSQL's text search parser
 * backtracks over long runs of path and markup characters ("~/~/", "/./.", "a_a_", "<!--"), and a task description of
 * such a run took seconds to save (on PGlite, on the service's only thread). Each such write is timed against a write
 * of ordinary prose of the same length, in the same run; and the words beside those characters are still found. On
 * PGlite; on PostgreSQL too with E2E_DATABASE_URL or DATABASE_URL (a fresh schema).
 */
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createdId, type Fixture, page, startFixture } from "../support/LabFixture.js"

const Result = Schema.Struct({ kind: Schema.String, ref: Schema.String })
const LENGTH = 19_000
const PROSE = "The loss fell after the learning rate was halved; see the figure. "

const suite = (name: string, databaseUrl: string | undefined) =>
  describe(`the search index on ${name}`, () => {
    let fx: Fixture
    beforeAll(async () => {
      const database = databaseUrl === undefined ? { database: { kind: "pglite" as const, dataDir: undefined } } : {}
      fx = await startFixture(`parser-${name}`, database, databaseUrl)
    }, 60_000)
    afterAll(() => fx?.close())

    /** Milliseconds to save a task with this description (the best of two). */
    const saving = async (description: string) => {
      let best = Number.POSITIVE_INFINITY
      for (let i = 0; i < 2; i++) {
        const started = performance.now()
        await createdId(fx, "/api/v1/tasks", { title: "timed", description })
        best = Math.min(best, performance.now() - started)
      }
      return best
    }

    it("indexes long runs of path and markup characters as fast as prose", { timeout: 120_000 }, async () => {
      const prose = await saving(PROSE.repeat(LENGTH / PROSE.length + 1).slice(0, LENGTH))
      for (const run of ["~/", "/.", "./", "a_", "<!--"]) {
        const took = await saving(run.repeat(LENGTH / run.length))
        expect(took, `${JSON.stringify(run)}: ${Math.round(took)} ms against ${Math.round(prose)} ms for prose`).toBeLessThan(5 * prose + 100)
      }
    })

    it("still finds the words beside those characters, as a query writes them", async () => {
      const id = await createdId(fx, "/api/v1/tasks", { title: "plots", description: "see loss_curve.png in ~/runs/seed-3 and ada@example.org" })
      for (const q of ["loss_curve.png", "loss", "~/runs", "ada@example.org", "example.org", "seed-3"]) {
        const found = await page(await fx.get("/api/v1/search", { labId: fx.lab.id, q }), Result)
        expect(found.data.map((r) => r.ref), q).toContain(id)
      }
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]

suite("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") suite("postgresql", postgresUrl)
