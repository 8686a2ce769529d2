/**
 * A new PGlite data directory is a copy of the build's (dist/pglite-template), else created by a process of its own
 * (layers/pglite-init.mjs), then opened by the service's worker thread; a directory that cannot be created fails the
 * start with the reason.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgliteWorker from "../../layers/PgliteWorker.js"

const rowsOf = (value: unknown) => (PgliteWorker.isRows(value) ? value : [])

/** A fresh directory for the test, removed after it (also when it fails). */
const base = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-init-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** Opens `dataDir` (no template unless given), runs `f` on it, closes it. */
const opened = <A>(dataDir: string, templateDir: string, f: (worker: PgliteWorker.PgliteWorker) => Effect.Effect<A, PgliteWorker.PgliteError>) =>
  Effect.scoped(Effect.flatMap(PgliteWorker.start(dataDir, templateDir), f))

describe("a new PGlite data directory", () => {
  it.live(
    "is created, opened, and opened again with what was written to it",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* base
          const dataDir = join(dir, "db")
          const buffers = yield* opened(dataDir, join(dir, "no-template"), (worker) =>
            worker.send({ op: "exec", sql: "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)" }).pipe(
              Effect.zipRight(worker.send({ op: "query", sql: "SHOW shared_buffers", params: [] }))
            )
          )
          expect(rowsOf(buffers)).toEqual([{ shared_buffers: "32MB" }])
          expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true)
          const rows = yield* opened(dataDir, join(dir, "no-template"), (worker) =>
            worker.send({ op: "query", sql: "SELECT n FROM kept", params: [] })
          )
          expect(rowsOf(rows)).toEqual([{ n: 7 }])
        })
      ),
    120_000
  )

  it.live(
    "is a copy of the build's template when there is one",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* base
          const template = join(dir, "template")
          // a template with a mark in it, so the copy shows where it came from (the build's has none)
          yield* opened(template, join(dir, "no-template"), (worker) =>
            worker.send({ op: "exec", sql: "CREATE TABLE mark (n int); INSERT INTO mark VALUES (1)" })
          )
          const rows = yield* opened(join(dir, "db"), template, (worker) =>
            worker.send({ op: "query", sql: "SELECT n FROM mark", params: [] })
          )
          expect(rowsOf(rows)).toEqual([{ n: 1 }])
          expect(existsSync(join(dir, "db.new"))).toBe(false)
        })
      ),
    120_000
  )

  it.live(
    "fills a directory that is there already (a volume mounted on it) and leaves nothing readable by others",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* base
          const template = join(dir, "template")
          yield* opened(template, join(dir, "no-template"), () => Effect.void)
          const dataDir = join(dir, "db")
          yield* Effect.promise(() => mkdir(join(dataDir, "lost+found"), { recursive: true }))
          const rows = yield* opened(dataDir, template, (worker) => worker.send({ op: "query", sql: "SELECT 1 AS one", params: [] }))
          expect(rowsOf(rows)).toEqual([{ one: 1 }])
          const mode = yield* Effect.promise(() => stat(join(dataDir, "PG_VERSION")))
          expect(mode.mode & 0o077).toBe(0)
          expect(existsSync(join(dir, "db.new"))).toBe(false)
        })
      ),
    120_000
  )

  it.live(
    "that cannot be created fails the start with the reason",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* base
          const file = join(dir, "a-file")
          yield* Effect.promise(() => writeFile(file, "not a directory"))
          const exit = yield* Effect.exit(opened(join(file, "db"), join(dir, "no-template"), () => Effect.void))
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit)) expect(String(exit.cause)).toMatch(/cannot create .*a-file\/db: \S/)
        })
      ),
    60_000
  )
})
