/** Helpers the benchmark scripts share: timing, ports, child processes, logs, PostgreSQL schemas. */
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"
import pg from "pg"

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

export const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export { freePort } from "../../test/support/FreePort.js"

export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password) u.password = "***"
    return u.toString()
  } catch {
    return "<unparseable url>"
  }
}

/** A PostgreSQL URL whose connections work in `schema`. */
export const withSearchPath = (url: string, schema: string) =>
  `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`

/** Runs one statement on a connection of its own. */
const runStatement = async (url: string, statement: string, connectTimeoutMs: number) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs })
  client.on("error", () => {})
  try {
    await client.connect()
    await client.query(statement)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A fresh schema `<prefix>_<time>_<random>` on the PostgreSQL at `baseUrl`: its name, a URL whose connections work
 * in it, and how to drop it. Rejects when the server cannot be reached.
 */
export const createSchema = async (baseUrl: string, prefix: string, connectTimeoutMs = 3_000) => {
  const schema = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`.replace(/[^a-z0-9_]/g, "_")
  const run = (statement: string) => runStatement(baseUrl, statement, connectTimeoutMs)
  await run(`CREATE SCHEMA "${schema}"`)
  return { schema, url: withSearchPath(baseUrl, schema), drop: () => run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`) }
}

/** The parent's environment without any setting that would change what the servers do. */
export const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of Object.keys(env)) {
    if (
      /^(PORT|HOST|DATA_DIR|DATABASE_URL|REDIS_URL|ADMIN_API_KEY|SECRETS_MASTER_KEY|PUBLIC_BASE_URL|RATE_LIMIT_.*|JWT_.*|GIT_ALLOWED_HOSTS|GIT_MAX_.*|BARE_.*|BENCH_TOKEN)$/.test(
        name
      )
    ) {
      delete env[name]
    }
  }
  return env
}

/** The last lines of a child's log, for error messages. */
export const logTail = (logPath: string, lines = 30): string => {
  try {
    return readFileSync(logPath, "utf8").split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

/** A server in a child process, as `waitForStatus` watches it. */
export interface StartedServer {
  readonly baseUrl: string
  readonly logPath: string
  readonly exited: Promise<void>
}

/**
 * Polls GET /api/v1/status every `pollMs` until it answers with a body `body` decodes. Fails with the server's log
 * when it exits first or is not ready within `timeoutMs` (`name` says which server).
 */
export const waitForStatus = async <A, I>(
  server: StartedServer,
  name: string,
  body: Schema.Schema<A, I>,
  pollMs: number,
  timeoutMs = 120_000
) => {
  const deadline = Date.now() + timeoutMs
  let exited = false
  void server.exited.then(() => (exited = true))
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${name} exited before it was ready; its log:\n${logTail(server.logPath)}`)
    try {
      const response = await fetch(`${server.baseUrl}/api/v1/status`, { signal: AbortSignal.timeout(2_000) })
      if (response.ok) {
        Schema.decodeUnknownSync(body)(await response.json())
        return
      }
    } catch {
      // not listening yet
    }
    await sleep(pollMs)
  }
  throw new Error(`${name} was not ready within ${timeoutMs / 1000} s; its log:\n${logTail(server.logPath)}`)
}

/** Signal a detached child's whole process group (the server and anything it started). */
export const killGroup = (child: ChildProcess, signal: NodeJS.Signals, evenIfLeaderExited = false) => {
  if (child.pid === undefined) return
  if (!evenIfLeaderExited && (child.exitCode !== null || child.signalCode !== null)) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

/**
 * What one benchmark run leaves behind: child processes (each in its own
 * process group), temp dirs and other cleanups. All go away at the end, on
 * exit and on Ctrl-C (`what` names them in that message).
 */
export const makeHousekeeping = (what: string) => {
  const children = new Set<ChildProcess>()
  const tempDirs = new Set<string>()
  const cleanups: Array<() => Promise<void>> = []

  /** SIGTERM (the server closes its database and exits), SIGKILL after `graceMs`. */
  const stopChild = async (child: ChildProcess, graceMs = 20_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child)
      return
    }
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    child.kill("SIGTERM")
    const timer = sleep(graceMs).then(() => "timeout" as const)
    if ((await Promise.race([exited.then(() => "exited" as const), timer])) === "timeout") {
      killGroup(child, "SIGKILL")
      await exited
    }
    children.delete(child)
  }

  const cleanupAll = async () => {
    await Promise.all([...children].map((child) => stopChild(child)))
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => process.stderr.write(`cleanup failed: ${describe(error)}\n`))
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
    tempDirs.clear()
  }

  process.on("exit", () => {
    for (const child of children) killGroup(child, "SIGKILL")
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  })
  let interrupted = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return
    interrupted = true
    process.stderr.write(`\n${signal}: stopping ${what} and cleaning up\n`)
    void cleanupAll().finally(() => process.exit(130))
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)

  /** A signal came: the handler stops everything and exits, so the run should stop too. */
  const isInterrupted = () => interrupted

  return { children, tempDirs, cleanups, stopChild, cleanupAll, isInterrupted }
}

/**
 * The deployment's command (package.json's `start`): node's flags, then its entry (`scripts/start.mjs`, the
 * compiled service; `--import tsx src/main.ts` in a checkout from before the build), so a benchmark runs the
 * service as `npm start` does, and the bare servers with the same flags.
 */
export const startCommand = (root: string): { readonly flags: ReadonlyArray<string>; readonly entry: ReadonlyArray<string> } => {
  const Scripts = Schema.Struct({ scripts: Schema.Struct({ start: Schema.String }) })
  const { scripts } = Schema.decodeUnknownSync(Schema.parseJson(Scripts))(readFileSync(join(root, "package.json"), "utf8"))
  const words = scripts.start.trim().split(/\s+/)
  // the flags end where the entry begins: `--import tsx src/main.ts` (before the build) or `scripts/start.mjs`
  const entryAt = words.findIndex((word, i) => i > 0 && (word === "--import" || !word.startsWith("-")))
  if (words[0] !== "node" || entryAt === -1) throw new Error(`package.json's start is not "node <flags> <entry>": ${scripts.start}`)
  return { flags: words.slice(1, entryAt), entry: words.slice(entryAt) }
}
