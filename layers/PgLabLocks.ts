import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { LabLocks, LockBusy, LockUnavailable } from "../src/sync/LabLocks.js"

/** Arbitrary constant: the advisory-lock class of the labs' sync locks (the lab id, hashed, is the object). */
const SYNC_LOCK_CLASS = 7_341_003

/**
 * A lab's git work on one replica at a time, for replicas sharing PostgreSQL: a session advisory lock on a
 * connection reserved for the job, tried once (`pg_try_advisory_lock`: never a blocked query that an interruption
 * could leave on a pooled connection). The unlock is registered before the try, so an interrupted try still
 * unlocks (unlocking a lock not held is a no-op). The lock ends with the job, or with the session when the replica
 * dies: at once when its process dies (the socket closes), within about 25 s when its host does (the session's
 * TCP keepalives, set on the reserved connection).
 */
export const layer = Layer.effect(
  LabLocks,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const take = (labId: string) =>
      Effect.gen(function* () {
        const connection = yield* sql.reserve
        yield* Effect.addFinalizer(() =>
          Effect.ignore(connection.executeValues("SELECT pg_advisory_unlock($1, hashtext($2))", [SYNC_LOCK_CLASS, labId]))
        )
        const rows = yield* connection.executeValues(
          "SELECT pg_try_advisory_lock($1, hashtext($2)), set_config('tcp_keepalives_idle', '10', false), " +
            "set_config('tcp_keepalives_interval', '5', false), set_config('tcp_keepalives_count', '3', false)",
          [SYNC_LOCK_CLASS, labId]
        )
        if (rows[0]?.[0] !== true) return yield* new LockBusy()
      }).pipe(
        Effect.catchTag("SqlError", (e) =>
          Effect.fail(new LockUnavailable({ message: `the lab's sync lock could not be taken: ${e.message}` }))
        )
      )
    return {
      tryExclusive: <A, E, R>(labId: string, job: Effect.Effect<A, E, R>) => Effect.scoped(Effect.zipRight(take(labId), job))
    }
  })
)
