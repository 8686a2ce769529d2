import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Data, Effect, Exit, FiberRef, FiberRefs, Layer, Option, Schedule } from "effect"

/**
 * A lost database connection (PostgreSQL restarted, a backend terminated, the
 * network cut) is not a fault of the request that was using it; nor is a
 * transaction the database rolled back to settle a deadlock (handled alike). A request is
 * run again when nothing it did could have been saved; otherwise it fails with
 * DatabaseUnavailable (503 at the HTTP edge), which says whether a change may
 * have landed. A write is never retried blindly: a COMMIT whose answer was lost
 * may have landed, and running the request again would make it twice.
 */

/** SQLSTATEs of a connection lost or refused: class 08, and the server shutting a backend (57P01-57P03). */
const LOST_STATES = new Set(["57P01", "57P02", "57P03"])
/** Node's socket errors. */
const SOCKET_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ENOTCONN", "ECONNABORTED", "EHOSTUNREACH"])
/** What pg says of a connection that ended or cannot be used (no SQLSTATE). */
const LOST_MESSAGES = /connection terminated|not queryable|connection error|connection timeout|timeout exceeded when trying to connect|server closed the connection/i
/** What @effect/sql-pg says when no connection could be had. */
const ACQUIRE_MESSAGES = /^(Failed to acquire connection|Connection error)/

const codeOf = (u: unknown): unknown => (typeof u === "object" && u !== null && "code" in u ? u.code : undefined)
const messageOf = (u: unknown): string => (u instanceof Error ? u.message : "")

/** What pg's pool says when every connection stayed in use for its whole connection timeout (a new one failing says otherwise). */
const POOL_BUSY_MESSAGE = "timeout exceeded when trying to connect"

/** Did this statement wait its whole time for a connection of a pool that was merely busy? Nothing of it was sent. */
export const isPoolBusy = (u: unknown): boolean => u instanceof SqlError && messageOf(u.cause) === POOL_BUSY_MESSAGE

/** Is this error a lost (or unobtainable) database connection? A busy pool is not (isPoolBusy). */
export const isConnectionLoss = (u: unknown): boolean => {
  if (!(u instanceof SqlError) || isPoolBusy(u)) return false
  if (ACQUIRE_MESSAGES.test(u.message)) return true
  const code = codeOf(u.cause)
  if (typeof code === "string" && (code.startsWith("08") || LOST_STATES.has(code) || SOCKET_CODES.has(code))) return true
  return LOST_MESSAGES.test(messageOf(u.cause))
}

/**
 * SQLSTATEs of a transaction PostgreSQL rolled back to break a deadlock (40P01) or a serialization conflict (40001):
 * nothing of it was saved, and PostgreSQL's manual asks the client to run it again. Seen in the fuzz test: a dataset's
 * delete deadlocked with a concurrent transaction and answered 500.
 */
const CONFLICT_STATES = new Set(["40P01", "40001"])

/** Was this statement's transaction rolled back by the database to settle a conflict with another one? */
export const isTransientConflict = (u: unknown): boolean => {
  const code = u instanceof SqlError ? codeOf(u.cause) : undefined
  return typeof code === "string" && CONFLICT_STATES.has(code)
}

const retryable = (u: unknown) => isConnectionLoss(u) || isTransientConflict(u)

/** Does `cause` hold an error (failure or defect) that `test` matches? */
const causeHas = (cause: Cause.Cause<unknown>, test: (u: unknown) => boolean): boolean =>
  Cause.reduce(cause, false, (found, part) =>
    found ? Option.some(true) : part._tag === "Fail" ? Option.some(test(part.error)) : part._tag === "Die" ? Option.some(test(part.defect)) : Option.none()
  )

/** A lost connection or a conflict the database settled by rolling back: either way, nothing of that transaction was saved. */
const causeIsRetryable = (cause: Cause.Cause<unknown>): boolean => causeHas(cause, retryable)

/**
 * The database could not be used; `mayHaveLanded`: a change of this request may have been saved before.
 * `busy`: no connection was lost, every one stayed in use while the request waited for one.
 */
export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{
  readonly mayHaveLanded: boolean
  readonly busy?: boolean
}> {}

/** What one run of a request may have saved so far. */
interface WriteLedger {
  mayHaveLanded: boolean
}

/**
 * The current run's ledger; `undefined`: none (work not counted, or outside a request). Not an Option: setting a
 * FiberRef compares the new value with the old, and comparing two Options hashes the ledgers inside, which gives each
 * new ledger an identity hash kept in a global WeakMap, on every request.
 */
const CurrentLedger = FiberRef.unsafeMake<WriteLedger | undefined>(undefined)

const inTransaction = (refs: FiberRefs.FiberRefs) =>
  Context.getOption(FiberRefs.getOrDefault(refs, FiberRef.currentContext), SqlClient.TransactionConnection)._tag === "Some"

/** A statement that only reads (by its first word); anything else is taken as one that may write. */
const onlyReads = (statement: Statement.Statement<unknown>) => {
  const first = statement.segments[0]
  return first !== undefined && first._tag === "Literal" && /^\s*(select|show)\b/i.test(first.value)
}

/**
 * Notes, before it is sent, a statement that may write outside a transaction (its answer could be lost after it
 * landed), in the ledger of the fiber sending it: `notCounted` work has none.
 */
const noteAutocommitWrites: Statement.Statement.Transformer = (statement, _sql, refs) => {
  const ledger = FiberRefs.getOrDefault(refs, CurrentLedger)
  if (ledger !== undefined && !ledger.mayHaveLanded && !onlyReads(statement) && !inTransaction(refs)) {
    ledger.mayHaveLanded = true
  }
  return Effect.succeed(statement)
}

/** The transformer as the FiberRef holds it, made once: an Option keeps its hash, computed when it is first compared. */
const NOTING_WRITES = Option.some(noteAutocommitWrites)

/**
 * The transformer installed for the fibers a layer's later parts run (the server's requests): it notes writes only
 * inside withConnectionRetry, where the ledger is set, and withConnectionRetry then sets only the ledger, one
 * FiberRef change fewer per request.
 */
export const notingWrites = Layer.locallyScoped(Statement.currentTransformer, NOTING_WRITES)

/**
 * The service's own bookkeeping (a key's `last_used_at`, a JWT user's `last_seen_at`): written, but not part of
 * what the request asked for, so its writes do not count as the request's. A read that lost its connection is
 * still a read: it runs again, and its 503 says nothing was changed. Only for idempotent writes, landed or not.
 */
export const notCounted = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, CurrentLedger, undefined)

/**
 * The SqlClient with its transactions noted in the current ledger: one whose body succeeded may have landed from
 * then on (its COMMIT is sent; if its answer is lost, nobody knows). A body that failed was rolled back: nothing.
 */
export const trackingWrites = (client: SqlClient.SqlClient): SqlClient.SqlClient => {
  const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
      Option.isSome(outer)
        ? client.withTransaction(effect)
        : Effect.flatMap(FiberRef.get(CurrentLedger), (ledger) =>
            ledger === undefined
              ? client.withTransaction(effect)
              : client.withTransaction(Effect.tap(effect, () => Effect.sync(() => (ledger.mayHaveLanded = true))))
          )
    )
  return new Proxy(client, {
    get: (target, property, receiver) => (property === "withTransaction" ? withTransaction : Reflect.get(target, property, receiver))
  })
}

/** Retries of a run that lost its connection before anything could land: about 0.4 s in all. */
const RETRIES = Schedule.exponential("25 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(4)))

interface Failed<E> {
  readonly cause: Cause.Cause<E>
  readonly lost: boolean
  readonly busy: boolean
  readonly mayHaveLanded: boolean
}

/** A run that lost its connection (or was rolled back) before anything of it could land runs again. */
const runsAgain = <E>(failed: Failed<E>) => failed.lost && !failed.mayHaveLanded

/**
 * Run `effect` (a request), again while it fails on a lost connection before anything of it could have been saved
 * (`retry: false`: never again, for a request whose input cannot be read twice). A connection still lost at the end
 * is DatabaseUnavailable; so is a pool that stayed busy for the whole connection timeout (not run again: it already
 * waited, and more requests would only lengthen the queue).
 */
export const withConnectionRetry = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly retry: boolean } = { retry: true }
): Effect.Effect<A, E | DatabaseUnavailable, R> => {
  // an effect that has already succeeded (a constant answer) uses no connection: nothing to watch or retry
  if (Exit.isExit(effect) && Exit.isSuccess(effect)) return effect
  const attempt = Effect.withFiberRuntime<A, Failed<E>, R>((fiber) => {
    const ledger: WriteLedger = { mayHaveLanded: false }
    const tracked = Effect.locally(effect, CurrentLedger, ledger)
    // where notingWrites installed the transformer for every fiber (the server), only the ledger is set
    const noted = fiber.getFiberRef(Statement.currentTransformer) === NOTING_WRITES
      ? tracked
      : Effect.locally(tracked, Statement.currentTransformer, NOTING_WRITES)
    return noted.pipe(
      Effect.sandbox,
      Effect.mapError(
        (cause): Failed<E> => ({ cause, lost: causeIsRetryable(cause), busy: causeHas(cause, isPoolBusy), mayHaveLanded: ledger.mayHaveLanded })
      )
    )
  })
  // Effect.retry builds its schedule's driver and context on every run; built here only once a run failed, the
  // first failure handed to it as its first attempt's, so the delays and the count are retry's own
  const retried = options.retry
    ? Effect.catchAll(attempt, (first) => {
        if (!runsAgain(first)) return Effect.fail(first)
        let pending: Option.Option<Failed<E>> = Option.some(first)
        const again = Effect.suspend(() => {
          if (Option.isNone(pending)) return attempt
          const failed = pending.value
          pending = Option.none()
          return Effect.fail(failed)
        })
        return Effect.retry(again, { schedule: RETRIES, while: runsAgain })
      })
    : attempt
  return retried.pipe(
    Effect.catchAll((f): Effect.Effect<never, E | DatabaseUnavailable> =>
      (f.lost || f.busy) && !Cause.isInterruptedOnly(f.cause)
        ? Effect.fail(new DatabaseUnavailable(f.lost ? { mayHaveLanded: f.mayHaveLanded } : { mayHaveLanded: f.mayHaveLanded, busy: true }))
        : Effect.failCause(f.cause)
    )
  )
}
