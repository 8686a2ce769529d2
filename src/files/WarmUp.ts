import * as SqlClient from "@effect/sql/SqlClient"
import { Data, Effect } from "effect"
import type { File } from "./File.js"
import { FilesRepo } from "./FilesRepo.js"

class RolledBack extends Data.TaggedError("RolledBack") {}

const LAB = "lab_warm_up"
const FILES = 1000

/**
 * Embedded PGlite compiles its WebAssembly, its trigger functions and its
 * catalog caches on first use: the first sync after a start stored its files
 * at a third of the later speed. At start, one bulk write of files (a made-up
 * lab, rolled back) takes that cost instead of the first user (~0.1-0.2 s of
 * a first sync of 1,000 files, measured with `npm run bench:sync`). 1,000 files
 * (~0.1 s at start) left a first sync's writes ~30 % faster than 200 did.
 */
export const warmUpFileWrites = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const files = yield* FilesRepo
  const now = new Date()
  const file = (i: number): File => ({
    labId: LAB,
    path: `/warm-up/${i}.md`,
    content: `# warm-up ${i}\n${"text of a file, stored and rolled back at start\n".repeat(30)}`,
    size: 0,
    sha: "0".repeat(40),
    source: "git",
    fromGit: true,
    createdAt: now,
    updatedAt: now
  })
  yield* Effect.gen(function* () {
    yield* sql`INSERT INTO labs (id, slug, name, plan, created_at, updated_at) VALUES (${LAB}, ${LAB}, 'warm-up', 'free', ${now}, ${now})`
    yield* files.storePulled(LAB, Array.from({ length: FILES }, (_, i) => ({ file: file(i), expected: null })))
    yield* files.states(LAB, [`/warm-up/0.md`])
    return yield* new RolledBack()
  }).pipe(sql.withTransaction, Effect.catchTag("RolledBack", () => Effect.void))
}).pipe(
  Effect.provide(FilesRepo.Default),
  // only a speed-up: a start never fails for it
  Effect.catchAllCause((cause) => Effect.logWarning("warming up the embedded database failed; going on", cause))
)
