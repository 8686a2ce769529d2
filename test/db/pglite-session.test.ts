/**
 * Embedded PGlite is one session (layers/PgliteClient.ts): single statements
 * may be on their way together, a transaction runs alone. A statement issued
 * while a transaction is open must neither see its writes nor be rolled back
 * with it.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Data, Effect, Fiber, Schema } from "effect"
import * as PgliteClient from "../../layers/PgliteClient.js"

class Abort extends Data.TaggedError("Abort") {}

const Count = Schema.Tuple(Schema.Struct({ n: Schema.Number }))
const count = (sql: SqlClient.SqlClient) =>
  Effect.flatMap(sql`SELECT count(*)::int AS n FROM notes`, Schema.decodeUnknown(Count)).pipe(Effect.map(([row]) => row.n))

layer(PgliteClient.layer(undefined), { excludeTestServices: true, timeout: "60 seconds" })("the PGlite session", (it) => {
  describe("statements and transactions", () => {
    it.effect("a statement issued during a transaction waits for it, sees none of its writes, and outlives its rollback", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (id int PRIMARY KEY)`
        const opened = yield* Effect.makeLatch(false)
        const transaction = yield* Effect.fork(
          Effect.gen(function* () {
            yield* sql`INSERT INTO notes VALUES (1)`
            yield* opened.open
            yield* Effect.sleep("150 millis")
            return yield* new Abort()
          }).pipe(sql.withTransaction)
        )
        yield* opened.await
        const seen = yield* count(sql)
        yield* sql`INSERT INTO notes VALUES (2)`
        expect(yield* Effect.flip(Fiber.join(transaction))).toBeInstanceOf(Abort)
        expect(seen).toBe(0)
        expect(yield* count(sql)).toBe(1)
      })
    )

    it.effect("many statements at once all run, each once, in the order they were issued", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE ticks (n int NOT NULL, at bigserial)`
        yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) => sql`INSERT INTO ticks (n) VALUES (${i})`, {
          concurrency: "unbounded",
          discard: true
        })
        const rows = yield* Effect.flatMap(sql`SELECT n FROM ticks ORDER BY at`, Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number }))))
        expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 200 }, (_, i) => i))
      })
    )

    it.effect("a transaction started while statements are on their way runs after them, alone", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE log (entry text NOT NULL, at bigserial)`
        const before = yield* Effect.fork(
          Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => sql`INSERT INTO log (entry) VALUES (${`before ${i}`})`, {
            concurrency: "unbounded",
            discard: true
          })
        )
        yield* Effect.yieldNow()
        yield* Effect.gen(function* () {
          yield* sql`INSERT INTO log (entry) VALUES ('tx 1')`
          yield* Effect.sleep("20 millis")
          yield* sql`INSERT INTO log (entry) VALUES ('tx 2')`
        }).pipe(sql.withTransaction)
        yield* Fiber.join(before)
        const entries = (yield* Effect.flatMap(sql`SELECT entry FROM log ORDER BY at`, Schema.decodeUnknown(Schema.Array(Schema.Struct({ entry: Schema.String }))))).map((r) => r.entry)
        const first = entries.indexOf("tx 1")
        expect(entries[first + 1]).toBe("tx 2")
        expect(entries).toHaveLength(52)
      })
    )
  })
})
