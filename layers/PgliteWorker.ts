import { Deferred, Effect, Either, Exit, FiberId, Schema, type Scope } from "effect"
import { spawn as spawnProcess } from "node:child_process"
import { existsSync } from "node:fs"
import { chmod, cp, readdir, rename, rm, stat } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"

const Failure = Schema.Struct({ message: Schema.String }).pipe(Schema.extend(Schema.Record({ key: Schema.String, value: Schema.String })))
/** What the thread says: once whether PGlite opened, then one reply per request, by the request's id. */
const Message = Schema.Union(
  Schema.Struct({ ready: Schema.Literal(true) }),
  Schema.Struct({ ready: Schema.Literal(false), error: Schema.optional(Failure) }),
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

export interface PgliteWorker {
  readonly send: (operation: Operation) => Effect.Effect<unknown, PgliteError>
}

const WORKER_FILE = new URL("./pglite-worker.mjs", import.meta.url)
const INIT_FILE = new URL("./pglite-init.mjs", import.meta.url)
/** A new data directory made by `npm run build` (scripts/build.mjs): dist/pglite-template. */
export const TEMPLATE_DIR = fileURLToPath(new URL("../pglite-template", import.meta.url))

/**
 * Start PGlite on its own thread (pglite-worker.mjs) and talk to it by
 * messages; the thread ends with the scope. It keeps the process alive only
 * while a request is open. A new data directory is a copy of the one the build
 * made (`templateDir`), else created first by a process of its own
 * (pglite-init.mjs): the memory initdb takes stays with it.
 */
export const start = (dataDir: string | undefined, templateDir = TEMPLATE_DIR): Effect.Effect<PgliteWorker, PgliteError, Scope.Scope> =>
  Effect.gen(function* () {
    if (dataDir !== undefined && !existsSync(join(dataDir, "PG_VERSION"))) {
      yield* existsSync(join(templateDir, "PG_VERSION")) ? copyTemplate(templateDir, dataDir) : initialize(dataDir)
    }
    const worker = yield* spawn(dataDir)
    if (dataDir !== undefined) {
      yield* Effect.tryPromise({
        try: () => makePrivate(dataDir),
        catch: (cause) => new PgliteError({ message: `cannot make ${dataDir} private: ${String(cause)}` })
      })
    }
    return worker
  })

/**
 * PGlite writes its initial data directory with modes of its own (0666 files
 * whatever the umask) and rewrites pg_internal.init 0644 when it opens; the
 * files PostgreSQL creates later are 0600. Once open, nothing in it is left
 * readable by other users.
 */
const makePrivate = async (dir: string): Promise<void> => {
  const { mode } = await stat(dir)
  if ((mode & 0o077) !== 0) await chmod(dir, mode & 0o700)
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await makePrivate(path)
    else if (entry.isFile()) {
      const file = await stat(path)
      if ((file.mode & 0o077) !== 0) await chmod(path, file.mode & 0o700)
    }
  }
}

/**
 * The thread's side of the conversation: a Deferred per open request, by id,
 * completed by the reply; all of them fail when the thread fails or exits.
 */
const connect = (worker: Worker) => {
  const ready = Deferred.unsafeMake<void, PgliteError>(FiberId.none)
  const pending = new Map<number, Deferred.Deferred<unknown, PgliteError>>()
  let nextId = 0
  // once the thread failed or exited, nothing would ever answer: later requests fail at once with its error
  let broken: PgliteError | undefined
  const holdOpen = () => (pending.size > 0 ? worker.ref() : worker.unref())
  const failAll = (error: PgliteError) => {
    broken ??= error
    Deferred.unsafeDone(ready, Exit.fail(error))
    for (const reply of pending.values()) Deferred.unsafeDone(reply, Exit.fail(error))
    pending.clear()
  }
  worker.on("message", (raw: unknown) => {
    const message = decodeMessage(raw)
    if (Either.isLeft(message)) return failAll(new PgliteError({ message: `the PGlite worker sent ${String(message.left)}` }))
    const value = message.right
    if ("ready" in value) {
      holdOpen()
      return Deferred.unsafeDone(ready, value.ready ? Exit.void : Exit.fail(new PgliteError(value.error ?? { message: "PGlite failed to start" })))
    }
    const reply = pending.get(value.id)
    pending.delete(value.id)
    holdOpen()
    if (reply !== undefined) Deferred.unsafeDone(reply, value.ok ? Exit.succeed(value.result) : Exit.fail(new PgliteError(value.error)))
  })
  worker.on("error", (error) => failAll(new PgliteError({ message: error.message })))
  worker.on("exit", (code) => failAll(new PgliteError({ message: `the PGlite worker exited (${code})` })))
  const send = (operation: Operation): Effect.Effect<unknown, PgliteError> =>
    Effect.suspend(() => {
      if (broken !== undefined) return Effect.fail(broken)
      const id = nextId++
      const reply = Deferred.unsafeMake<unknown, PgliteError>(FiberId.none)
      pending.set(id, reply)
      holdOpen()
      worker.postMessage({ id, ...operation })
      return Deferred.await(reply)
    })
  return { ready: Deferred.await(ready), send }
}

/** One thread, open once PGlite is; at the scope's end PGlite closes (5 s at most) and the thread ends. */
const spawn = (dataDir: string | undefined): Effect.Effect<PgliteWorker, PgliteError, Scope.Scope> =>
  Effect.gen(function* () {
    const [, channel] = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const worker = new Worker(WORKER_FILE, { workerData: { dataDir } })
        return [worker, connect(worker)] as const
      }),
      ([worker, channel]) =>
        channel.send({ op: "close" }).pipe(
          Effect.ignore,
          Effect.timeoutOption(5000),
          Effect.zipRight(Effect.promise(() => worker.terminate()))
        )
    )
    yield* channel.ready
    return { send: channel.send }
  })

/** `node pglite-init.mjs <dir>`, interrupted by killing it; its standard error (the last 4 KB) is the failure's message. */
const initialize = (dataDir: string): Effect.Effect<void, PgliteError> =>
  Effect.async<void, PgliteError>((resume) => {
    const child = spawnProcess(process.execPath, [fileURLToPath(INIT_FILE), dataDir], { stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096)
    })
    child.once("error", (error) => resume(Effect.fail(new PgliteError({ message: `cannot create ${dataDir}: ${error.message}` }))))
    child.once("close", (code, signal) =>
      resume(
        code === 0
          ? Effect.void
          : Effect.fail(new PgliteError({ message: `cannot create ${dataDir} (${signal ?? `exit ${code}`}): ${stderr.trim()}` }))
      )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * The build's new data directory, copied beside `dataDir` and renamed into place, so a start stopped halfway leaves
 * no directory that looks made. initdb took 2.6 s of a first start's ~5.5 (bench:start on this machine).
 */
const copyTemplate = (templateDir: string, dataDir: string): Effect.Effect<void, PgliteError> =>
  Effect.tryPromise({
    try: async () => {
      const staging = `${dataDir}.new`
      await rm(staging, { recursive: true, force: true })
      await cp(templateDir, staging, { recursive: true })
      await rename(staging, dataDir)
    },
    catch: (cause) => new PgliteError({ message: `cannot create ${dataDir} from ${templateDir}: ${String(cause)}` })
  })

/** Rows as the worker sends them: an array of records (query), or of arrays (rowMode "array"). */
export const isRows = (value: unknown): value is ReadonlyArray<Record<string, unknown>> => Array.isArray(value)

export const isValueRows = (value: unknown): value is ReadonlyArray<ReadonlyArray<unknown>> =>
  Array.isArray(value) && value.every((row) => Array.isArray(row))
