import { Effect, Schema } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/TestServer.js"

/** A deployment's embedded database writes files once at start (src/files/WarmUp.ts) and keeps nothing of it. */
const Counts = Schema.Array(
  Schema.Struct({ labs: Schema.Number, files: Schema.Number, queued: Schema.Number, versions: Schema.Number })
)

let server: TestServer | undefined
let dir: string | undefined
afterAll(async () => {
  await server?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe("warming up the embedded database", () => {
  it("leaves no lab, file or queued search entry behind, and the service starts as usual", async () => {
    dir = await mkdtemp(join(tmpdir(), "lab-warm-up-"))
    server = await startTestServer({ database: { kind: "pglite", dataDir: join(dir, "pglite") } })
    const counts = await server.sql((sql) =>
      Effect.flatMap(
        sql`SELECT (SELECT count(*) FROM labs)::int AS labs, (SELECT count(*) FROM files)::int AS files,
                   (SELECT count(*) FROM search_queue)::int AS queued,
                   -- a sequence is not rolled back: it shows the warm-up's files were written (one statement, one version)
                   (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM search_queue_version)::int AS versions`,
        Schema.decodeUnknown(Counts)
      )
    )
    expect(counts).toEqual([{ labs: 0, files: 0, queued: 0, versions: 1 }])
    const status = await fetch(`${server.baseUrl}/api/v1/status`)
    expect(status.status).toBe(200)
  })
})
