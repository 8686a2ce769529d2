import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Schedule } from "effect"
import { LabLocks, LockUnavailable } from "../src/sync/LabLocks.js"

/** Arbitrary constant: the advisory-lock class of the labs' sync locks (the lab id, hashed, is the object). */
const SYNC_LOCK_CLASS = 7_341_003

/** While another replica holds the lock, asked again this often (a job there ends, or its replica dies). */
const POLL = Schedule.spaced("100 millis")

/**
 * A lab's git work on one replica at a time, for replicas sharing PostgreSQL: a session advisory lock on a
 * connection reserved for the job. `pg_try_advisory_lock` is polled rather than waited on: an interrupted wait
 * would leave a blocked query on a connection going back to the pool. The lock ends with the job, or with the
 * connection when the replica dies (PostgreSQL ends the session as the socket closes): another replica takes the
 * lab's work over at its next job.
 */
export const layer = Layer.effect(
  LabLocks,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const unavailable = (error: unknown) => new LockUnavailable({ message: `the lab's sync lock could not be taken: ${String(error)}` })
    const take = (labId: string) =>
      Effect.gen(function* () {
        const connection = yield* sql.reserve
        const tryLock = connection.executeValues("SELECT pg_try_advisory_lock($1, hashtext($2))", [SYNC_LOCK_CLASS, labId]).pipe(
          Effect.map((rows) => rows[0]?.[0] === true)
        )
        yield* Effect.repeat(tryLock, { schedule: POLL, until: (taken) => taken })
        yield* Effect.addFinalizer(() =>
          Effect.ignore(connection.executeValues("SELECT pg_advisory_unlock($1, hashtext($2))", [SYNC_LOCK_CLASS, labId]))
        )
      }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(unavailable(e.message))))
    return {
      exclusive: <A, E, R>(labId: string, job: Effect.Effect<A, E, R>) => Effect.scoped(Effect.zipRight(take(labId), job))
    }
  })
)
