/**
 * A new PGlite data directory is a copy of the build's (dist/pglite-template), else created by a process of its own
 * (layers/pglite-init.mjs), then opened by the service's worker thread; a directory that cannot be created fails the
 * start with the reason.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { existsSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgliteWorker from "../../layers/PgliteWorker.js"

const rowsOf = (value: unknown) => (PgliteWorker.isRows(value) ? value : [])

describe("a new PGlite data directory", () => {
  it.live(
    "is created, opened, and opened again with what was written to it",
    () =>
      Effect.gen(function* () {
        const base = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-init-")))
        const dataDir = join(base, "db")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const worker = yield* PgliteWorker.start(dataDir, join(base, "no-template"))
            yield* worker.send({ op: "exec", sql: "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)" })
            const buffers = yield* worker.send({ op: "query", sql: "SHOW shared_buffers", params: [] })
            expect(rowsOf(buffers)).toEqual([{ shared_buffers: "32MB" }])
          })
        )
        expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true)
        const rows = yield* Effect.scoped(
          Effect.flatMap(PgliteWorker.start(dataDir, join(base, "no-template")), (worker) => worker.send({ op: "query", sql: "SELECT n FROM kept", params: [] }))
        )
        expect(rowsOf(rows)).toEqual([{ n: 7 }])
        yield* Effect.promise(() => rm(base, { recursive: true, force: true }))
      }),
    120_000
  )

  it.live(
    "is a copy of the build's template when there is one",
    () =>
      Effect.gen(function* () {
        const base = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-init-")))
        const template = join(base, "template")
        // a template with a mark in it, so the copy shows where it came from (the build's has none)
        yield* Effect.scoped(
          Effect.flatMap(PgliteWorker.start(template, join(base, "no-template")), (worker) =>
            worker.send({ op: "exec", sql: "CREATE TABLE mark (n int); INSERT INTO mark VALUES (1)" })
          )
        )
        const rows = yield* Effect.scoped(
          Effect.flatMap(PgliteWorker.start(join(base, "db"), template), (worker) =>
            worker.send({ op: "query", sql: "SELECT n FROM mark", params: [] })
          )
        )
        expect(rowsOf(rows)).toEqual([{ n: 1 }])
        expect(existsSync(join(base, "db.new"))).toBe(false)
        yield* Effect.promise(() => rm(base, { recursive: true, force: true }))
      }),
    120_000
  )

  it.live(
    "that cannot be created fails the start with the reason",
    () =>
      Effect.gen(function* () {
        const base = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-init-")))
        const file = join(base, "a-file")
        yield* Effect.promise(() => writeFile(file, "not a directory"))
        const exit = yield* Effect.exit(Effect.scoped(PgliteWorker.start(join(file, "db"), join(base, "no-template"))))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toMatch(/cannot create .*a-file\/db \(exit 1\): \S/)
        yield* Effect.promise(() => rm(base, { recursive: true, force: true }))
      }),
    60_000
  )
})
