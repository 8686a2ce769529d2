/**
 * A restore and a dataset's delete at once (the fuzz test, seed 227719280, PostgreSQL: DELETE /datasets/{id}
 * answered 500 on `deadlock detected`, 40P01: the seed asks for a restore of the lab and, 70 ms later, while the
 * restore still runs in the background, deletes the lab's dataset).
 * A delete locks its row, then the lab's counters (lab_usage, by the statement triggers of migrations 8 and 10).
 * The restore, one transaction then, updated the counters at its first delete of a lab's table and only then reached
 * the dataset's row: each waited for the other. The restore now puts the lab back in steps behind the restore gate
 * (migration 15). Here its apply is held (a third connection locks a knowledge row, a table the restore deletes
 * between tasks and datasets) while the delete runs; then let go: the delete must end as the gate's plain refusal
 * (409 at the edge), never as a deadlock, the restore must complete, and the counters must still count the lab's rows.
 * PostgreSQL only (PGlite is one session: nothing runs at once): skipped without DATABASE_URL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../layers/Database.js"
import { Archive } from "../../src/backups/Archive.js"
import { DatabaseKind } from "../../src/db/DatabaseKind.js"
import { restoreGateMessage } from "../../src/db/RestoreGate.js"
import type { Dataset } from "../../src/datasets/Dataset.js"
import { Datasets } from "../../src/datasets/Datasets.js"
import { type LabId, systemLab } from "../../src/labs/LabId.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { postgresInFreshSchema } from "../support/PostgresSchema.js"

const url = process.env["DATABASE_URL"]

/** A defect as the database said it: SQLSTATE and message (40P01 deadlock detected), or the defect itself. */
const databaseError = (defect: unknown): unknown => {
  const cause = defect instanceof SqlError ? defect.cause : undefined
  return cause instanceof Error && "code" in cause ? `${String(cause.code)} ${cause.message}` : defect
}

const Usage = Schema.Array(Schema.Struct({ records: Schema.Number, rows: Schema.Number }))

/** The tables this test writes rows of that the records counter (migration 10) counts. */
const COUNTED = ["tasks", "knowledge", "datasets"]

describe.skipIf(url === undefined || url === "")("a restore and a dataset's delete at once (PostgreSQL)", () => {
  const schema = `test_${randomBytes(6).toString("hex")}`
  // this run's own backends, found by name in pg_stat_activity
  const applicationName = `lab-service-restore-${randomBytes(4).toString("hex")}`
  const named = `${url ?? ""}${(url ?? "").includes("?") ? "&" : "?"}application_name=${applicationName}`
  const layer = Layer.mergeAll(Datasets.Default, Archive.Default, LabsRepo.Default).pipe(
    Layer.provideMerge(postgresInFreshSchema(named, schema, (scoped) => Database.layer({ kind: "postgresql", url: scoped }))),
    Layer.provideMerge(Layer.succeed(DatabaseKind, "postgresql"))
  )
  let runtime: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<typeof layer>, unknown>
  let observer: pg.Client

  beforeAll(async () => {
    runtime = ManagedRuntime.make(layer)
    await runtime.runPromise(Effect.void)
    observer = new pg.Client({ connectionString: url })
    await observer.connect()
  }, 60_000)
  afterAll(async () => {
    await observer?.end()
    await runtime?.dispose()
  })

  /** Our backends waiting for a lock, and on whom. */
  const waiting = async () =>
    (
      await observer.query<{ pid: number; query: string; blockers: Array<number> }>(
        `SELECT pid, query, pg_blocking_pids(pid) AS blockers FROM pg_stat_activity
         WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [applicationName]
      )
    ).rows

  const until = async (what: string, ready: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000
    while (!(await ready())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  const inLab = (labId: LabId) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const now = new Date()
      yield* sql`INSERT INTO tasks (id, lab_id, title, status, created_at, updated_at)
                 VALUES (${`task_${randomBytes(6).toString("hex")}`}, ${labId}, 'a task', 'todo', ${now}, ${now})`
      const knowledge = `kn_${randomBytes(6).toString("hex")}`
      yield* sql`INSERT INTO knowledge (id, lab_id, title, body, created_at, updated_at)
                 VALUES (${knowledge}, ${labId}, 'a note', 'its body', ${now}, ${now})`
      const input = { name: "d", description: "", format: "csv", uri: "https://example.org/d.csv", tags: [] }
      const dataset: Dataset = yield* Effect.orDie(Effect.flatMap(Datasets, (datasets) => datasets.create(labId, input, "test")))
      return { knowledge, dataset }
    })

  it("the delete is refused by the restore gate, not rolled back as a deadlock, and the lab's counters stay right", { timeout: 60_000 }, async () => {
    const slug = `restore-${randomBytes(4).toString("hex")}`
    const lab = await runtime.runPromise(Effect.flatMap(LabsRepo, (labs) => labs.insert({ slug, name: "Restore", plan: "free" })))
    const labId = systemLab(lab.id)
    const { knowledge, dataset } = await runtime.runPromise(inLab(labId))
    // a backup of the lab, its archive checked (short steps), the lab marked (one short transaction)
    const backupId = `bkp_${randomBytes(6).toString("hex")}`
    const { verified, sha256 } = await runtime.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const archive = yield* Archive
        yield* sql`INSERT INTO backups (id, lab_id, status, tables, rows, created_by, created_at)
                   VALUES (${backupId}, ${labId}, 'running', '{}', 0, 'test', now())`
        const dump = yield* archive.dump(backupId, labId)
        const checked = yield* archive.check(backupId, labId, dump.sha256)
        yield* archive.mark(labId, checked.verified).pipe(sql.withTransaction)
        return { verified: checked.verified, sha256: dump.sha256 }
      })
    )

    // the apply will wait for this row, after the tables it deletes before knowledge (tasks among them)
    const blocker = new pg.Client({ connectionString: named })
    await blocker.connect()
    try {
      await blocker.query(`SET search_path = "${schema}"`)
      await blocker.query("BEGIN")
      await blocker.query("SELECT 1 FROM knowledge WHERE id = $1 FOR UPDATE", [knowledge])
      const blockerPid = (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid

      const restoring = runtime.runPromiseExit(Effect.flatMap(Archive, (archive) => archive.apply(labId, verified, sha256)))
      await until("the restore waits for the held row", async () => (await waiting()).some((w) => w.blockers.includes(blockerPid ?? -1)))

      // the gate refuses the delete at once: it neither waits for the restore nor makes the restore wait
      const deleted = await runtime.runPromiseExit(Effect.flatMap(Datasets, (datasets) => datasets.remove(labId, dataset.id, "test")))
      await blocker.query("COMMIT")

      const restored = await restoring
      expect(Exit.isSuccess(restored), Exit.isFailure(restored) ? Cause.pretty(restored.cause) : "").toBe(true)
      const defect = Exit.isFailure(deleted) ? Option.getOrUndefined(Cause.dieOption(deleted.cause)) : undefined
      expect(restoreGateMessage(defect), String(databaseError(defect))).toBe(
        `lab ${labId} is being restored from backup ${backupId}; retry when the restore has ended`
      )
    } finally {
      await blocker.end()
    }

    // the counters the triggers keep match the rows the lab holds
    const [usage] = await runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.flatMap(
          sql`SELECT u.records, (${sql.literal(COUNTED.map((t) => `(SELECT count(*) FROM ${t} x WHERE x.lab_id = u.lab_id)`).join(" + "))})::int AS rows
              FROM lab_usage u WHERE u.lab_id = ${labId}`,
          Schema.decodeUnknown(Usage)
        )
      )
    )
    expect(usage?.records).toBe(usage?.rows)
  })
})
