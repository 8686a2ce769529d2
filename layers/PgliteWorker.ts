import { Deferred, Effect, Either, ExecutionStrategy, Exit, FiberId, FiberRef, Schema, Scope } from "effect"
import { existsSync } from "node:fs"
import { statfs } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { LongStatements } from "../src/db/Priority.js"
import { createDataDir, makePrivate } from "./PgliteDataDir.js"
import { Worker } from "node:worker_threads"

const Failure = Schema.Struct({ message: Schema.String }).pipe(Schema.extend(Schema.Record({ key: Schema.String, value: Schema.String })))
/** What the thread says: once whether PGlite opened, then one reply per request, by the request's id. */
const Message = Schema.Union(
  Schema.Struct({ ready: Schema.Literal(true) }),
  Schema.Struct({ ready: Schema.Literal(false), error: Schema.optional(Failure) }),
  /** PGlite aborted (a PANIC): no statement would return again */
  Schema.Struct({ stopped: Failure }),
  Schema.Struct({ id: Schema.Number, ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({ id: Schema.Number, ok: Schema.Literal(false), error: Failure })
)
const decodeMessage = Schema.decodeUnknownEither(Message)

/** A database error from the worker, with PostgreSQL's fields (`code` is the SQLSTATE), as PGlite throws it in-process. */
export class PgliteError extends Error {
  constructor(fields: typeof Failure.Type) {
    super(fields.message)
    Object.assign(this, fields)
  }
}

export type Operation =
  | { readonly op: "exec"; readonly sql: string }
  | { readonly op: "query"; readonly sql: string; readonly params: ReadonlyArray<unknown>; readonly rowMode?: "array" }
  | { readonly op: "raw"; readonly sql: string; readonly params: ReadonlyArray<unknown> }
  | { readonly op: "close" }

export type Send = (operation: Operation) => Effect.Effect<unknown, PgliteError>

export interface PgliteWorker {
  /** To the open database; one that stopped (a PANIC) is opened again first, at most every REOPEN_EVERY_MILLIS. */
  readonly send: Send
  /** The open database's own `send`, which never reopens it: a transaction's statements all go to the one it began on. */
  readonly pinned: Effect.Effect<Send, PgliteError>
}

const WORKER_FILE = new URL("./pglite-worker.mjs", import.meta.url)
/** A new data directory made by `npm run build` (scripts/build.mjs): dist/pglite-template. */
export const TEMPLATE_DIR = fileURLToPath(new URL("../pglite-template", import.meta.url))

/**
 * Start PGlite on its own thread (pglite-worker.mjs) and talk to it by
 * messages; the thread ends with the scope. It keeps the process alive only
 * while a request is open. A new data directory is made first
 * (PgliteDataDir.ts).
 */
export const start = (
  dataDir: string | undefined,
  templateDir = TEMPLATE_DIR,
  stallMillis = STALL_MILLIS
): Effect.Effect<PgliteWorker, PgliteError, Scope.Scope> =>
  Effect.gen(function* () {
    if (dataDir !== undefined && !existsSync(join(dataDir, "PG_VERSION"))) {
      yield* Effect.tryPromise({
        try: (signal) => createDataDir(dataDir, templateDir, signal),
        catch: (cause) =>
          new PgliteError({
            // a system error's code (ENOSPC: the disk is full) is kept for the start's report
            ...(cause instanceof Error && "code" in cause && typeof cause.code === "string" ? { code: cause.code } : {}),
            message: `cannot create ${dataDir}: ${cause instanceof Error ? cause.message : String(cause)}`
          })
      })
    }
    const worker = yield* supervise(dataDir, stallMillis)
    if (dataDir !== undefined) {
      yield* Effect.tryPromise({
        try: () => makePrivate(dataDir),
        catch: (cause) => new PgliteError({ message: `cannot make ${dataDir} private: ${String(cause)}` })
      })
    }
    return worker
  })

/**
 * A statement unanswered this long (nothing else answered meanwhile) is taken for a stuck thread, ended like one that
 * PANICked: far beyond any statement of the service (they are cut into short steps), short enough that a stop ends.
 * Statements sent under `allowingLongStatements` (migrations, a restore) are not timed: they may rightly take longer.
 */
export const STALL_MILLIS = 120_000

/** After a failed reopen, requests fail at once with the stop's error for this long before the next attempt. */
export const REOPEN_EVERY_MILLIS = 5_000

/**
 * PostgreSQL restarts after a PANIC (a WAL segment it could not write on a full disk, say) and recovers from its WAL;
 * PGlite does not: its next statement never returns (a thread spinning at 100 % CPU). The thread is ended at the PANIC
 * (connect), and the next request opens the data directory again on a new one, which recovers as PostgreSQL would
 * (it cannot while the disk is still full: requests fail with the PANIC's error until it can).
 */
const supervise = (dataDir: string | undefined, stallMillis: number): Effect.Effect<PgliteWorker, PgliteError, Scope.Scope> =>
  Effect.gen(function* () {
    const parent = yield* Effect.scope
    const openIn = (scope: Scope.CloseableScope) =>
      Effect.tapErrorCause(Scope.extend(spawn(dataDir, stallMillis), scope), () => Scope.close(scope, Exit.void))
    let scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    let current = yield* openIn(scope)
    let lastAttempt = 0
    // why the last reopening failed: what requests fail with until the next attempt
    let lastFailure: PgliteError | undefined
    const reopening = yield* Effect.makeSemaphore(1)
    const reopen = (stopped: PgliteError) =>
      Effect.gen(function* () {
        const again = current.broken()
        if (again === undefined) return current
        if (Date.now() - lastAttempt < REOPEN_EVERY_MILLIS) return yield* Effect.fail(lastFailure ?? stopped)
        lastAttempt = Date.now()
        yield* Scope.close(scope, Exit.void)
        scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        current = yield* openIn(scope).pipe(
          // an open that never ends would keep every request waiting: given up (and its thread ended) after a minute
          Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new PgliteError({ message: "opening took over 60 s" }) }),
          Effect.catchAll((error) =>
            Effect.flatMap(roomFor(dataDir), (room) =>
              Effect.fail(
                (lastFailure = new PgliteError({
                  ...fieldsOf(stopped),
                  // PGlite does not say why it could not open; too little room for PostgreSQL's WAL is the usual reason
                  ...(room === "short" ? { code: DISK_FULL } : {}),
                  message: `${stopped.message} (reopening failed${room === "short" ? ": no room left on its disk" : ""}: ${error.message})`
                }))
              )
            )
          )
        )
        lastFailure = undefined
        yield* Effect.logWarning(`${stopped.message}; it was opened again`)
        return current
      }).pipe(reopening.withPermits(1))
    const open: Effect.Effect<Channel, PgliteError> = Effect.suspend(() => {
      const stopped = current.broken()
      return stopped === undefined ? Effect.succeed(current) : reopen(stopped)
    })
    return {
      send: (operation) => Effect.flatMap(open, (channel) => channel.send(operation)),
      pinned: Effect.map(open, (channel) => channel.send)
    }
  })

const DISK_FULL = "53100"
/** admin_shutdown: the drivers' code for a backend that ended under its session (src/db/ConnectionLoss.ts). */
const STOPPED = "57P01"

/** Below this many free bytes PGlite cannot open: its recovery needs a new 16 MiB WAL segment, and a checkpoint. */
const ROOM_TO_OPEN = 32 * 1024 * 1024

const roomFor = (dataDir: string | undefined): Effect.Effect<"short" | "enough"> =>
  dataDir === undefined
    ? Effect.succeed("enough")
    : Effect.promise(() => statfs(dataDir).then((stats) => (stats.bavail * stats.bsize < ROOM_TO_OPEN ? "short" : "enough"), () => "enough"))

/** A failure's PostgreSQL fields (its SQLSTATE above all), to fail with again. */
const fieldsOf = (error: PgliteError): typeof Failure.Type => {
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(error)) if (typeof value === "string") fields[key] = value
  return { ...fields, message: error.message }
}

/**
 * The thread's side of the conversation: a Deferred per open request, by id,
 * completed by the reply; all of them fail when the thread fails or exits, or
 * PGlite answers with a PANIC: then the thread is ended (supervise).
 */
const connect = (worker: Worker, stallMillis: number) => {
  const ready = Deferred.unsafeMake<void, PgliteError>(FiberId.none)
  const pending = new Map<number, Deferred.Deferred<unknown, PgliteError>>()
  // ids of the pending requests allowed to run long: while one waits, the thread is busy with it or queued behind it
  const longRunning = new Set<number>()
  let nextId = 0
  // once the thread failed or exited, nothing would ever answer: later requests fail at once with its error
  let broken: PgliteError | undefined
  const holdOpen = () => (pending.size > 0 ? worker.ref() : worker.unref())
  // the last sign of life while something waits: a thread stuck in PGlite in a way not seen yet is ended too
  let lastProgress = Date.now()
  const watchdog = setInterval(() => {
    if (pending.size > 0 && longRunning.size === 0 && Date.now() - lastProgress > stallMillis) {
      stop({ message: `PGlite answered nothing for ${Math.round(stallMillis / 1000)} s: its thread was ended` })
    }
  }, Math.min(5_000, stallMillis / 4)).unref()
  const failAll = (error: PgliteError) => {
    broken ??= error
    Deferred.unsafeDone(ready, Exit.fail(error))
    for (const reply of pending.values()) Deferred.unsafeDone(reply, Exit.fail(error))
    pending.clear()
    longRunning.clear()
  }
  worker.on("message", (raw: unknown) => {
    const message = decodeMessage(raw)
    if (Either.isLeft(message)) return failAll(new PgliteError({ message: `the PGlite worker sent ${String(message.left)}` }))
    const value = message.right
    if ("stopped" in value) return stop(value.stopped)
    if ("ready" in value) {
      holdOpen()
      return Deferred.unsafeDone(ready, value.ready ? Exit.void : Exit.fail(new PgliteError(value.error ?? { message: "PGlite failed to start" })))
    }
    lastProgress = Date.now()
    const reply = pending.get(value.id)
    pending.delete(value.id)
    longRunning.delete(value.id)
    holdOpen()
    if (reply !== undefined) Deferred.unsafeDone(reply, value.ok ? Exit.succeed(value.result) : Exit.fail(new PgliteError(value.error)))
    if (!value.ok && value.error["severity"] === "PANIC") stop(value.error)
  })
  // what was waiting fails as a lost connection would (57P01: a request that saved nothing is retried), or as a full
  // disk when that was the cause (53100: 507 at the HTTP edge)
  const stop = (error: typeof Failure.Type) => {
    failAll(new PgliteError({ ...error, code: error["code"] === DISK_FULL ? DISK_FULL : STOPPED, message: `the embedded database stopped: ${error.message}` }))
    void worker.terminate()
  }
  worker.on("error", (error) => failAll(new PgliteError({ message: error.message })))
  worker.on("exit", (code) => {
    clearInterval(watchdog)
    failAll(new PgliteError({ message: `the PGlite worker exited (${code})` }))
  })
  const send = (operation: Operation): Effect.Effect<unknown, PgliteError> =>
    Effect.flatMap(FiberRef.get(LongStatements), (long) => {
      if (broken !== undefined) return Effect.fail(broken)
      if (pending.size === 0) lastProgress = Date.now()
      const id = nextId++
      const reply = Deferred.unsafeMake<unknown, PgliteError>(FiberId.none)
      pending.set(id, reply)
      if (long) longRunning.add(id)
      holdOpen()
      worker.postMessage({ id, ...operation })
      return Deferred.await(reply)
    })
  return { ready: Deferred.await(ready), send, broken: () => broken }
}

interface Channel {
  readonly send: Send
  /** Why the thread can no longer answer, once it cannot. */
  readonly broken: () => PgliteError | undefined
}

/** One thread, open once PGlite is; at the scope's end PGlite closes (5 s at most) and the thread ends. */
const spawn = (dataDir: string | undefined, stallMillis: number): Effect.Effect<Channel, PgliteError, Scope.Scope> =>
  Effect.gen(function* () {
    const [, channel] = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const worker = new Worker(WORKER_FILE, { workerData: { dataDir } })
        return [worker, connect(worker, stallMillis)] as const
      }),
      ([worker, channel]) =>
        channel.send({ op: "close" }).pipe(
          Effect.ignore,
          Effect.timeoutOption(5000),
          Effect.zipRight(Effect.promise(() => worker.terminate()))
        )
    )
    yield* channel.ready
    return { send: channel.send, broken: channel.broken }
  })

/** Rows as the worker sends them: an array of records (query), or of arrays (rowMode "array"). */
export const isRows = (value: unknown): value is ReadonlyArray<Record<string, unknown>> => Array.isArray(value)

export const isValueRows = (value: unknown): value is ReadonlyArray<ReadonlyArray<unknown>> =>
  Array.isArray(value) && value.every((row) => Array.isArray(row))
