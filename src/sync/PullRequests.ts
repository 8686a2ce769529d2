import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * Pulls asked for, on record in the database (sync_pull_requests, migration 11) until a pull that started after the
 * request is done: the replicas' sweep (SyncSweep.ts) takes over one whose replica died first.
 */
export const pullRequests = (sql: SqlClient.SqlClient) => {
  /** A pull was asked for (a webhook): recorded until a pull that started after it is done. */
  const wantPull = (labId: string) =>
    Effect.orDie(sql`
      INSERT INTO sync_pull_requests (lab_id, wanted_at) SELECT ${labId}, now()
      WHERE EXISTS (SELECT 1 FROM labs WHERE id = ${labId})
      ON CONFLICT (lab_id) DO UPDATE SET wanted_at = excluded.wanted_at`)

  /** The pull request on record (its time, as the database wrote it), if any. */
  const pullWanted = (labId: string) =>
    Effect.map(
      Effect.orDie(sql<{ at: string }>`SELECT wanted_at::text AS at FROM sync_pull_requests WHERE lab_id = ${labId}`),
      (rows) => Option.fromNullable(rows[0]?.at)
    )

  /** A pull that started after the request `at` is done: cleared, unless a newer request came meanwhile. */
  const pullDone = (labId: string, at: string) =>
    Effect.orDie(sql`DELETE FROM sync_pull_requests WHERE lab_id = ${labId} AND wanted_at = ${at}::timestamptz`)

  /** Linked labs whose pull request has waited over `seconds` (a replica died with it, say). */
  const labsWantingPull = (seconds: number) =>
    Effect.map(
      Effect.orDie(
        sql<{ labId: string }>`SELECT r.lab_id FROM sync_pull_requests r JOIN lab_repos l ON l.lab_id = r.lab_id
          WHERE r.wanted_at < now() - make_interval(secs => ${seconds})`
      ),
      (rows) => rows.map((r) => r.labId)
    )

  return { wantPull, pullWanted, pullDone, labsWantingPull }
}
