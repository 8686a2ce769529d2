/**
 * The baseline for scripts/bench-http.ts: GET /api/v1/tasks on plain node:http,
 * no Effect, running the service's list query (src/tasks/TasksRepo.ts, first
 * page, no status filter) through the same driver (PGlite's `query`, or a pg
 * Pool of 10 as layers/PgDatabase.ts makes) and answering with the same list
 * envelope. It checks the bearer token by plain string comparison and does
 * nothing else the service does (no rate limits, no lab lookup, no schemas).
 *
 * Env: PORT, HOST (default 127.0.0.1), BENCH_TOKEN, and either
 * BARE_DATABASE_URL (PostgreSQL) or BARE_PGLITE_DIR (an existing PGlite data dir).
 * GET /api/v1/status answers 200 once the database is open.
 */
import { PGlite } from "@electric-sql/pglite"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"

/** The statement the service's TasksRepo.list compiles to for a first page without a status filter. */
const LIST_SQL = `
          SELECT * FROM tasks
          WHERE lab_id = $1
            AND TRUE
            AND TRUE
          ORDER BY created_at DESC, id DESC
          LIMIT $2`

type Row = Readonly<Record<string, unknown>>
type Query = (sql: string, params: Array<unknown>) => Promise<ReadonlyArray<Row>>

const required = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`bare-server: ${name} is required`)
  return value
}

const port = Number(required("PORT"))
if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error("bare-server: PORT must be a port number")
const host = process.env["HOST"] ?? "127.0.0.1"
const expectedAuthorization = `Bearer ${required("BENCH_TOKEN")}`
const databaseUrl = process.env["BARE_DATABASE_URL"]
const pgliteDir = process.env["BARE_PGLITE_DIR"]

const open = async (): Promise<{ readonly kind: "postgresql" | "pglite"; readonly query: Query; readonly close: () => Promise<void> }> => {
  if (databaseUrl) {
    // the service's pool: 10 connections (layers/PgDatabase.ts); its int8 parser does not matter, tasks has no int8 column
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, application_name: "bench-bare" })
    pool.on("error", () => {})
    await pool.query("SELECT 1")
    return {
      kind: "postgresql",
      query: async (sql, params) => (await pool.query<Row>(sql, params)).rows,
      close: () => pool.end()
    }
  }
  if (!pgliteDir) throw new Error("bare-server: set BARE_DATABASE_URL or BARE_PGLITE_DIR")
  const db = await PGlite.create({ dataDir: pgliteDir })
  return {
    kind: "pglite",
    query: async (sql, params) => (await db.query<Row>(sql, params)).rows,
    close: () => db.close()
  }
}

const text = (row: Row, column: string): string => {
  const value = row[column]
  if (typeof value !== "string") throw new Error(`tasks.${column}: expected text`)
  return value
}

const timestamp = (row: Row, column: string): string => {
  const value = row[column]
  if (!(value instanceof Date)) throw new Error(`tasks.${column}: expected a timestamp`)
  return value.toISOString()
}

const STATUSES: ReadonlySet<string> = new Set(["todo", "in_progress", "done", "cancelled"])

/** A row as the service puts a Task on the wire (same fields, same order). */
const toTask = (row: Row) => {
  const status = text(row, "status")
  if (!STATUSES.has(status)) throw new Error(`tasks.status: unexpected ${status}`)
  return {
    id: text(row, "id"),
    labId: text(row, "lab_id"),
    title: text(row, "title"),
    description: text(row, "description"),
    status,
    createdAt: timestamp(row, "created_at"),
    updatedAt: timestamp(row, "updated_at")
  }
}

const meta = () => ({ request_id: `req_${randomBytes(12).toString("base64url")}`, timestamp: new Date().toISOString() })

const send = (res: ServerResponse, status: number, body: unknown, requestId: string) => {
  const json = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    "x-request-id": requestId
  })
  res.end(json)
}

const fail = (res: ServerResponse, status: number, code: string, message: string) => {
  const m = meta()
  send(res, status, { error: { code, message, status }, meta: m }, m.request_id)
}

const main = async () => {
  const database = await open()

  const listTasks = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.headers.authorization !== expectedAuthorization) return fail(res, 401, "unauthorized", "bad credentials")
    const labId = url.searchParams.get("labId")
    if (!labId) return fail(res, 422, "validation_error", "labId is required")
    const limitParam = url.searchParams.get("limit")
    const limit = limitParam === null ? 20 : Number(limitParam)
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return fail(res, 422, "validation_error", "limit: 1 to 100")

    const rows = await database.query(LIST_SQL, [labId, limit + 1])
    const items = rows.slice(0, limit).map(toTask)
    const last = items.at(-1)
    const nextCursor =
      rows.length > limit && last
        ? Buffer.from(JSON.stringify({ createdAt: last.createdAt, id: last.id })).toString("base64url")
        : null
    const m = meta()
    send(res, 200, { data: items, meta: { ...m, next_cursor: nextCursor, has_more: nextCursor !== null } }, m.request_id)
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://bare")
    if (req.method === "GET" && url.pathname === "/api/v1/status") {
      const m = meta()
      return send(res, 200, { data: { status: "ok", database: database.kind }, meta: m }, m.request_id)
    }
    if (req.method === "GET" && url.pathname === "/api/v1/tasks") {
      return void listTasks(req, res, url).catch((error: unknown) => {
        process.stderr.write(`bare-server: ${String(error)}\n`)
        if (!res.headersSent) fail(res, 500, "server_error", "internal error")
      })
    }
    fail(res, 404, "not_found", "no route")
  })

  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    server.close()
    server.closeAllConnections()
    database.close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)

  server.listen(port, host, () => process.stdout.write(`bare-server (${database.kind}) on http://${host}:${port}\n`))
}

main().catch((error: unknown) => {
  process.stderr.write(`bare-server failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
