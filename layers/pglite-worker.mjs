// PGlite on a worker thread (layers/PgliteClient.ts): its statements run here, so
// the service's event loop keeps serving while the database works. Plain
// JavaScript: a worker starts from a file that every runner (node, tsx, vitest)
// loads as is. One request at a time: {id, op: "exec" | "query" | "raw" | "close", sql, params, rowMode}.
import { statfsSync } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { describeFailure, openPglite } from "./pglite-open.mjs"
import { encodeTextArray } from "./pglite-text-array.mjs"

/** What a caller needs of a failure, as plain data (an Error loses its own fields crossing threads). */
const failure = (error) => {
  if (typeof error !== "object" || error === null) return { message: String(error) }
  const fields = {}
  for (const key of ["code", "detail", "hint", "constraint", "table", "column", "schema", "severity", "position", "where"]) {
    if (typeof error[key] === "string") fields[key] = error[key]
  }
  return { ...fields, ...describeFailure(error) }
}

const TEXT_ARRAY_OID = 1009
/** A new WAL segment's size: less free than this under the data directory, and a PANIC is taken for a full disk. */
const ROOM_FOR_WAL = 16 * 1024 * 1024

const roomLeft = () => {
  try {
    const stats = statfsSync(workerData.dataDir ?? ".")
    return stats.bavail * stats.bsize
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

let db
let options
// PGlite's WebAssembly aborted (PostgreSQL's PANIC: a WAL segment it could not write on a full disk, say); its next
// statement would never return, spinning a core. What PostgreSQL said, for the requests refused from then on.
let stopped

/**
 * PGlite's loop swallows whatever its step throws, and an abort is not the longjmp of an ERROR: note it, and say so at
 * once. After an abort the loop's next step may never return (a thread spinning at 100 % CPU), so no answer would
 * follow: the main thread ends this thread on the message (PgliteWorker.ts). The step is the module's export, wrapped
 * in place (PGlite reads it from the module at each step).
 */
const noteAborts = (pglite) => {
  // PostgreSQL's own report of the PANIC comes, if at all, after the stop: a full disk, its usual cause, is seen here
  const abortReport = () =>
    roomLeft() < ROOM_FOR_WAL
      ? { severity: "PANIC", code: "53100", message: "PGlite aborted: no space left on device for its write-ahead log" }
      : { severity: "PANIC", message: "PGlite aborted (PostgreSQL PANICked)" }
  const step = pglite.mod._PostgresMainLoopOnce
  pglite.mod._PostgresMainLoopOnce = (...args) => {
    try {
      return step(...args)
    } catch (error) {
      if (error?.status !== pglite.POSTGRES_MAIN_LONGJMP && stopped === undefined) {
        stopped = abortReport()
        parentPort.postMessage({ stopped })
      }
      throw error
    }
  }
}

try {
  db = await openPglite(workerData.dataDir)
  noteAborts(db)
  const literal = db.serializers[TEXT_ARRAY_OID]
  // a sync's files travel as text[]: binary is cheaper (pglite-text-array.mjs); anything but a flat array keeps the literal
  options = { serializers: { [TEXT_ARRAY_OID]: (value) => encodeTextArray(value) ?? literal(value) } }
  parentPort.postMessage({ ready: true })
} catch (error) {
  parentPort.postMessage({ ready: false, error: failure(error) })
}

const run = async ({ op, sql, params, rowMode }) => {
  switch (op) {
    case "exec":
      return (await db.exec(sql)).at(-1)?.rows ?? []
    case "query":
      return (await db.query(sql, params, rowMode ? { ...options, rowMode } : options)).rows
    case "raw":
      return await db.query(sql, params, options)
    case "close":
      await db.close()
      return null
    default:
      throw new Error(`unknown operation ${op}`)
  }
}

const answer = async (request) => {
  if (stopped !== undefined && request.op !== "close") return parentPort.postMessage({ id: request.id, ok: false, error: stopped })
  try {
    parentPort.postMessage({ id: request.id, ok: true, result: await run(request) })
  } catch (error) {
    const reply = failure(error)
    // PostgreSQL's own report of the PANIC is the better description of the stop
    if (stopped !== undefined && reply.severity === "PANIC") stopped = reply
    parentPort.postMessage({ id: request.id, ok: false, error: stopped ?? reply })
  }
  // the main thread ends this thread and opens the database again on a new one (PgliteWorker.ts)
  if (stopped !== undefined) parentPort.postMessage({ stopped })
}

// One request at a time, each after the last one's answer: a statement waiting in PGlite's own queue behind the one
// that PANICked (a write's behind the search indexer's, say) could otherwise be run on the aborted module before that
// answer and the stop were sent, and spin for ever, answering nothing
let previous = Promise.resolve()
parentPort.on("message", (request) => {
  const answered = previous.then(() => answer(request))
  // a failure to answer stays unhandled, ending the thread as before; the next request still waits its turn
  previous = answered.catch(() => undefined)
})
