import { Schema } from "effect"
import { existsSync } from "node:fs"
import { chmod, readdir, stat } from "node:fs/promises"
import { join } from "node:path"
import { Worker } from "node:worker_threads"

const Failure = Schema.Struct({ message: Schema.String }).pipe(Schema.extend(Schema.Record({ key: Schema.String, value: Schema.String })))
const Ready = Schema.Struct({ ready: Schema.Boolean, error: Schema.optional(Failure) })
const Reply = Schema.Union(
  Schema.Struct({ id: Schema.Number, ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({ id: Schema.Number, ok: Schema.Literal(false), error: Failure })
)
const decodeReady = Schema.decodeUnknownSync(Ready)
const decodeReply = Schema.decodeUnknownSync(Reply)

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
  readonly send: (operation: Operation) => Promise<unknown>
  readonly close: () => Promise<void>
}

const WORKER_FILE = new URL("./pglite-worker.mjs", import.meta.url)

/**
 * Start PGlite on its own thread (pglite-worker.mjs) and talk to it by
 * messages. The thread keeps the process alive only while a request is open.
 * A new data directory is created by a first thread that then exits: the
 * memory initdb takes (~0.5 GB) stays with the thread that ran it, so the
 * service's own thread opens the directory that one left.
 */
export const start = async (dataDir: string | undefined): Promise<PgliteWorker> => {
  if (dataDir !== undefined && !existsSync(join(dataDir, "PG_VERSION"))) await (await spawn(dataDir)).close()
  const worker = await spawn(dataDir)
  if (dataDir !== undefined) await makePrivate(dataDir)
  return worker
}

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

const spawn = (dataDir: string | undefined): Promise<PgliteWorker> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_FILE, { workerData: { dataDir } })
    const pending = new Map<number, { readonly resolve: (value: unknown) => void; readonly reject: (error: unknown) => void }>()
    let nextId = 0
    let ready = false
    const settleAll = (error: Error) => {
      for (const request of pending.values()) request.reject(error)
      pending.clear()
    }
    const holdOpen = () => (pending.size > 0 ? worker.ref() : worker.unref())

    worker.on("message", (message: unknown) => {
      if (!ready) {
        const hello = decodeReady(message)
        if (!hello.ready) return reject(new PgliteError(hello.error ?? { message: "PGlite failed to start" }))
        ready = true
        holdOpen()
        return resolve({ send, close })
      }
      const reply = decodeReply(message)
      const request = pending.get(reply.id)
      pending.delete(reply.id)
      holdOpen()
      if (reply.ok) request?.resolve(reply.result)
      else request?.reject(new PgliteError(reply.error))
    })
    worker.on("error", (error) => {
      if (!ready) reject(error)
      settleAll(error)
    })
    worker.on("exit", (code) => {
      if (!ready) reject(new Error(`the PGlite worker exited (${code}) before it was ready`))
      settleAll(new Error(`the PGlite worker exited (${code})`))
    })

    const send = (operation: Operation) =>
      new Promise<unknown>((resolveRequest, rejectRequest) => {
        const id = nextId++
        pending.set(id, { resolve: resolveRequest, reject: rejectRequest })
        holdOpen()
        worker.postMessage({ id, ...operation })
      })
    const close = async () => {
      await send({ op: "close" }).catch(() => undefined)
      await worker.terminate()
    }
  })

/** Rows as the worker sends them: an array of records (query), or of arrays (rowMode "array"). */
export const isRows = (value: unknown): value is ReadonlyArray<Record<string, unknown>> => Array.isArray(value)

export const isValueRows = (value: unknown): value is ReadonlyArray<ReadonlyArray<unknown>> =>
  Array.isArray(value) && value.every((row) => Array.isArray(row))
