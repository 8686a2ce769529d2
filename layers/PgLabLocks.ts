import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, ExecutionStrategy, Exit, Layer, Option, Scope } from "effect"
import * as pg from "pg"
import { isPoolBusy } from "../src/db/ConnectionLoss.js"
import { fromLock, LabLocks, LockBusy, LockUnavailable } from "../src/sync/LabLocks.js"

/** Arbitrary constant: the advisory-lock class of the labs' sync locks (the lab id, hashed, is the object). */
const SYNC_LOCK_CLASS = 7_341_003

/**
 * A session statement unanswered after this is taken for a silent database host (a partition, a frozen VM): the
 * session is dropped and the lock attempt fails, rather than every lock and unlock of the replica waiting on it for
 * the ~15 minutes TCP would take to give up.
 */
export const SESSION_STATEMENT_TIMEOUT = Duration.seconds(5)

/** The pg client under a reserved @effect/sql-pg connection (its `pg` field), so that a session dropped can end its socket. */
const pgClientOf = (connection: Connection): Option.Option<pg.Client> =>
  "pg" in connection && connection.pg instanceof pg.Client ? Option.some(connection.pg) : Option.none()

interface Session {
  readonly connection: Connection
  readonly scope: Scope.CloseableScope
}

/**
 * A lab's git work on one replica at a time, for replicas sharing PostgreSQL: session advisory locks, all of a
 * replica's on one connection reserved while any is held (so a job or a link change holding a lock holds no pooled
 * connection of its own, and 16 of them cannot starve the pool of the connections their statements need). Each lock
 * is tried once (`pg_try_advisory_lock`: never a blocked query) in a step that cannot be interrupted halfway, and
 * unlocked when its holder's scope closes. A session's locks are re-entrant, so the labs held here are also kept in
 * memory: a second holder of a lab in this process is refused. The locks end with their holders, or with the session
 * when the replica dies: at once when its process dies (the socket closes), within about 25 s when its host does
 * (the session's TCP keepalives). A session statement that fails or stays unanswered for SESSION_STATEMENT_TIMEOUT
 * drops the session and its connection (PostgreSQL ends its locks when it sees the connection closed): a silent
 * database costs a lock attempt seconds, never every lock of the replica a quarter of an hour.
 */
export const layer = Layer.scoped(
  LabLocks,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const layerScope = yield* Effect.scope
    const held = new Set<string>()
    const mutex = yield* Effect.makeSemaphore(1)
    let session: Option.Option<Session> = Option.none()

    const open = Effect.gen(function* () {
      const scope = yield* Scope.fork(layerScope, ExecutionStrategy.sequential)
      const connection = yield* Effect.tapErrorCause(Scope.extend(sql.reserve, scope), (cause) => Scope.close(scope, Exit.failCause(cause)))
      const opened: Session = { connection, scope }
      session = Option.some(opened)
      yield* statement(
        opened,
        "SELECT set_config('tcp_keepalives_idle', '10', false), set_config('tcp_keepalives_interval', '5', false), " +
          "set_config('tcp_keepalives_count', '3', false)",
        []
      )
      return opened
    })

    // the session's connection back to the pool, holding no lock
    const close = (s: Session) =>
      Effect.suspend(() => {
        if (Option.isSome(session) && session.value === s) session = Option.none()
        return Scope.close(s.scope, Exit.void)
      })

    /**
     * Drops the session: its connection is ended, never put back in the pool, since it may still hold locks or be
     * stuck on a statement (pg destroys the socket of a client with a statement under way; the pool then removes it).
     */
    const drop = (s: Session) =>
      Effect.suspend(() => {
        const client = pgClientOf(s.connection)
        if (Option.isSome(client)) client.value.end().catch(() => {})
        return close(s)
      })

    /**
     * A statement on the session, interruptible and bounded by SESSION_STATEMENT_TIMEOUT. Any failure drops the
     * session: a connection lost or silent has lost its locks or soon will, and one that answered with an error
     * (57014, a cancel) is in a state not worth keeping; the next statement opens another session. The statement is
     * disconnected so that the timeout answers at once while pg's cancel of it runs on.
     */
    const statement = (s: Session, text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
      s.connection.executeValues(text, params).pipe(
        Effect.disconnect,
        Effect.interruptible,
        Effect.timeoutFail({
          duration: SESSION_STATEMENT_TIMEOUT,
          onTimeout: () => new SqlError({ cause: null, message: "the lock session's statement was not answered in time" })
        }),
        Effect.tapError(() => drop(s))
      )

    // one statement at a time on the session, none cut halfway; the session is read once the mutex is held (one read
    // before could be a session another holder has since closed, its connection back in the pool and in other hands)
    const onSession = <A>(f: (s: Session) => Effect.Effect<A, SqlError>) =>
      Effect.uninterruptible(
        mutex.withPermits(1)(Effect.flatMap(Effect.suspend(() => Option.match(session, { onNone: () => open, onSome: Effect.succeed })), f))
      )

    // a lab held elsewhere is forgotten here at once, and the session closed if it now holds nothing
    const tryLock = (labId: string) =>
      onSession((s) =>
        Effect.flatMap(statement(s, "SELECT pg_try_advisory_lock($1, hashtext($2))", [SYNC_LOCK_CLASS, labId]), (rows) => {
          if (rows[0]?.[0] === true) return Effect.succeed(true)
          held.delete(labId)
          return Effect.as(held.size === 0 ? close(s) : Effect.void, false)
        })
      )

    // a lab is forgotten only once its unlock ran, so no other unlock closes the session under its lock; the
    // connection goes back to the pool once no lab is held (a failed unlock has dropped the session: statement)
    const unlock = (labId: string) =>
      Effect.ignore(
        onSession((s) =>
          Effect.zipRight(
            statement(s, "SELECT pg_advisory_unlock($1, hashtext($2))", [SYNC_LOCK_CLASS, labId]),
            Effect.suspend(() => {
              held.delete(labId)
              return held.size === 0 ? close(s) : Effect.void
            })
          )
        )
      )

    const lock = (labId: string) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          if (held.has(labId)) return Effect.fail(new LockBusy())
          held.add(labId)
          return tryLock(labId).pipe(
            Effect.catchTag("SqlError", (e) =>
              Effect.fail(new LockUnavailable({ message: `the lab's sync lock could not be taken: ${e.message}`, busy: isPoolBusy(e) }))
            ),
            Effect.filterOrFail((locked) => locked, () => new LockBusy()),
            Effect.tapError(() => Effect.sync(() => held.delete(labId)))
          )
        }),
        () => Effect.ensuring(unlock(labId), Effect.sync(() => held.delete(labId)))
      )

    yield* Effect.addFinalizer(() => Option.match(session, { onNone: () => Effect.void, onSome: close }))
    return fromLock((labId) => Effect.asVoid(lock(labId)))
  })
)
