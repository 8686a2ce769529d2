/**
 * The PGlite worker binds text[] parameters in PostgreSQL's binary array format
 * (layers/pglite-text-array.mjs). What a statement reads back must be exactly
 * what was sent, for every shape of array a caller can pass.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as PgliteClient from "../../layers/PgliteClient.js"

const Echo = Schema.Tuple(Schema.Struct({ items: Schema.Unknown, n: Schema.NullOr(Schema.Number) }))

const echo = (items: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT ${items}::text[] AS items, cardinality(${items}::text[]) AS n`
    const [row] = yield* Schema.decodeUnknown(Echo)(rows)
    return row
  })

layer(PgliteClient.layer(undefined), { excludeTestServices: true, timeout: "60 seconds" })("PGlite text[] parameters", (it) => {
  describe("a flat array of strings", () => {
    it.effect("reads back unchanged, however awkward its text", () =>
      Effect.gen(function* () {
        const texts = ["", "plain", 'say "hi"', "{a,b}", "a,b", "back\\slash \\", "NULL", "line\nline\r\n\tend", "ünïcödé ✓ 𝛼 😀", "x".repeat(200_000)]
        expect(yield* echo(texts)).toEqual({ items: texts, n: texts.length })
      })
    )

    it.effect("keeps nulls apart from the text 'NULL' and the empty string", () =>
      Effect.gen(function* () {
        expect(yield* echo([null, "NULL", "", null])).toEqual({ items: [null, "NULL", "", null], n: 4 })
      })
    )

    it.effect("an empty array is empty", () =>
      Effect.gen(function* () {
        expect(yield* echo([])).toEqual({ items: [], n: 0 })
      })
    )

    it.effect("thousands of elements arrive in order", () =>
      Effect.gen(function* () {
        const many = Array.from({ length: 5_000 }, (_, i) => `/dir/${i}.md`)
        expect(yield* echo(many)).toEqual({ items: many, n: 5_000 })
      })
    )
  })

  describe("anything else keeps PostgreSQL's array literal", () => {
    it.effect("a two-dimensional array", () =>
      Effect.gen(function* () {
        expect(yield* echo([["a", "b"], ["c", "d"]])).toEqual({ items: [["a", "b"], ["c", "d"]], n: 4 })
      })
    )

    it.effect("numbers become their text", () =>
      Effect.gen(function* () {
        expect(yield* echo([1, 2.5])).toEqual({ items: ["1", "2.5"], n: 2 })
      })
    )
  })
})
