/** Helpers the benchmark scripts share: timing, ports, child processes, logs, PostgreSQL schemas. */
import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

export const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export const freePort = () =>
  new Promise<number>((done, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? done(port) : fail(new Error("no free port"))))
    })
  })

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

/** The parent's environment without any setting that would change what the servers do. */
export const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of Object.keys(env)) {
    if (
      /^(PORT|HOST|DATA_DIR|DATABASE_URL|REDIS_URL|ADMIN_API_KEY|SECRETS_MASTER_KEY|PUBLIC_BASE_URL|RATE_LIMIT_.*|JWT_.*|BARE_.*|BENCH_TOKEN)$/.test(
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

/** Signal a detached child's whole process group (tsx and the node it starts). */
export const killGroup = (child: ChildProcess, signal: NodeJS.Signals, evenIfLeaderExited = false) => {
  if (child.pid === undefined) return
  if (!evenIfLeaderExited && (child.exitCode !== null || child.signalCode !== null)) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}
