import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"

const Count = Schema.Struct({ n: Schema.NumberFromString })
const decodeCount = Schema.decodeUnknown(Schema.Tuple(Count))

/** Counts behind the quotas. The checks run in the caller's transaction, serialised per lab and quota. */
export class QuotasRepo extends Effect.Service<QuotasRepo>()("QuotasRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    // counts come back as text (bigint), whatever the driver
    const count = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      Effect.orDie(Effect.map(Effect.flatMap(statement, decodeCount), ([row]) => row.n))

    /** Until the transaction ends, other checks of this quota in this lab wait (on PostgreSQL; PGlite is one session). */
    const lock = (quota: string, labId: string) =>
      Effect.orDie(sql`SELECT pg_advisory_xact_lock(hashtext(${`quota:${quota}:${labId}`}))`)

    /** Live keys whose scopes name the lab with this slug, with either access. */
    const liveKeysNaming = (slug: string) =>
      count(sql`
        SELECT count(*)::text AS n FROM api_keys
        WHERE (scopes @> ${JSON.stringify([`lab:${slug}:rw`])}::jsonb OR scopes @> ${JSON.stringify([`lab:${slug}:r`])}::jsonb)
          AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`)

    /** Pods that hold (or are about to hold) compute: starting, running, or stopping to start again. */
    const activePods = (labId: string, exceptPodId: string) =>
      count(sql`
        SELECT count(*)::text AS n FROM pods
        WHERE lab_id = ${labId} AND id <> ${exceptPodId}
          AND (status IN ('starting', 'running') OR (status = 'stopping' AND desired_status = 'running'))`)

    /**
     * Bytes of the lab's files (a counter kept by triggers on files, migration 8)
     * and of its backups' archives.
     */
    const storedBytes = (labId: string) =>
      count(sql`
        SELECT (COALESCE((SELECT file_bytes FROM lab_usage WHERE lab_id = ${labId}), 0)
              + COALESCE((SELECT sum(size) FROM backups WHERE lab_id = ${labId}), 0))::text AS n`)

    /** Bytes of the lab's files alone (the counter of migration 8). */
    const fileBytes = (labId: string) =>
      count(sql`SELECT COALESCE((SELECT file_bytes FROM lab_usage WHERE lab_id = ${labId}), 0)::text AS n`)

    const backups = (labId: string) => count(sql`SELECT count(*)::text AS n FROM backups WHERE lab_id = ${labId}`)

    /** The records quota the database enforces (migration 10): this instance's limits, written at start. */
    const setRecordLimits = (limits: ReadonlyArray<{ readonly plan: string; readonly records: number }>) =>
      Effect.orDie(
        Effect.forEach(
          limits,
          ({ plan, records }) =>
            sql`INSERT INTO plan_limits (plan, records) VALUES (${plan}, ${records})
                ON CONFLICT (plan) DO UPDATE SET records = EXCLUDED.records`,
          { discard: true }
        )
      )

    return { lock, liveKeysNaming, activePods, storedBytes, fileBytes, backups, setRecordLimits }
  })
}) {}
