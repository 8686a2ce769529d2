import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { freePort } from "./FreePort.js"
import { requestAt } from "./Requests.js"
import type { TestServer } from "./TestServer.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The service as an operator runs it (`npm start`): its own node process, killable at any moment. */
export interface ServiceProcess extends Pick<TestServer, "baseUrl" | "adminKey" | "request"> {
  /** Everything the process wrote to stdout and stderr so far. */
  readonly output: () => string
  /** Send `signal`; resolves with the exit code (null when killed by a signal) once the process is gone. */
  readonly stop: (signal: NodeJS.Signals) => Promise<number | null>
}

export interface ServiceSettings {
  readonly dataDir: string
  readonly adminKey: string
  readonly masterKey: string
  /** A PostgreSQL URL; the embedded PGlite under `dataDir` when absent. */
  readonly databaseUrl?: string | undefined
  readonly env?: Record<string, string>
  /** The checkout to run (another one gives a benchmark its reference); this one by default. */
  readonly root?: string
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode)
    else child.once("exit", (code) => resolve(code))
  })

/** Start `src/main.ts` with the given settings and wait until it answers `GET /api/v1/status`. */
export const startServiceProcess = async (settings: ServiceSettings, readyTimeoutMs = 60_000): Promise<ServiceProcess> => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: settings.root ?? ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: settings.dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: baseUrl,
      DATA_DIR: settings.dataDir,
      ADMIN_API_KEY: settings.adminKey,
      SECRETS_MASTER_KEY: settings.masterKey,
      GIT_ALLOWED_HOSTS: "127.0.0.1",
      ...(settings.databaseUrl === undefined ? {} : { DATABASE_URL: settings.databaseUrl }),
      ...settings.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))

  const request = requestAt(baseUrl)

  const stop = async (signal: NodeJS.Signals) => {
    const gone = exited(child)
    child.kill(signal)
    return gone
  }

  const start = Date.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before it was ready:\n${output}`)
    const ready = await request("GET", "/api/v1/status", { token: settings.adminKey }).then(
      (r) => r.body?.cancel().then(() => r.ok) ?? r.ok,
      () => false
    )
    if (ready) break
    if (Date.now() - start > readyTimeoutMs) {
      await stop("SIGKILL")
      throw new Error(`the service was not ready after ${readyTimeoutMs} ms:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { baseUrl, adminKey: settings.adminKey, request, output: () => output, stop }
}
