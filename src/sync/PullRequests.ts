import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * Pulls asked for, on record in the database (lab_repos.pull_wanted_at, migration 11) until a pull that started
 * after the request is done: the replicas' sweep (SyncSweep.ts) takes over one whose replica died first.
 */
export const pullRequests = (sql: SqlClient.SqlClient) => {
  /** A pull was asked for (a webhook): recorded until a pull that started after it is done. */
  const wantPull = (labId: string) => Effect.orDie(sql`UPDATE lab_repos SET pull_wanted_at = now() WHERE lab_id = ${labId}`)

  /** The pull request on record (its time, as the database wrote it), if any. */
  const pullWanted = (labId: string) =>
    Effect.map(
      Effect.orDie(sql<{ at: string | null }>`SELECT pull_wanted_at::text AS at FROM lab_repos WHERE lab_id = ${labId}`),
      (rows) => Option.fromNullable(rows[0]?.at)
    )

  /** A pull that started after the request `at` is done: cleared, unless a newer request came meanwhile. */
  const pullDone = (labId: string, at: string) =>
    Effect.orDie(sql`UPDATE lab_repos SET pull_wanted_at = NULL WHERE lab_id = ${labId} AND pull_wanted_at = ${at}::timestamptz`)

  /** Labs whose pull request has waited over `seconds` (a replica died with it, say). */
  const labsWantingPull = (seconds: number) =>
    Effect.map(
      Effect.orDie(
        sql<{ labId: string }>`SELECT lab_id FROM lab_repos WHERE pull_wanted_at < now() - make_interval(secs => ${seconds})`
      ),
      (rows) => rows.map((r) => r.labId)
    )


  return { wantPull, pullWanted, pullDone, labsWantingPull }
}
