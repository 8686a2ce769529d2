import { type ChildProcess, spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const ownRoot = fileURLToPath(new URL("../..", import.meta.url))

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

export interface ServiceProcess {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>
  /** A JSON request as the operator (the admin key DATA_DIR holds). */
  readonly call: (method: string, path: string, json?: unknown) => Promise<Response>
}

/**
 * The deployment as a real process (`tsx src/main.ts`, embedded PGlite, git on disk) on DATA_DIR, started and
 * answering. Loopback git hosts are allowed, so the test git server can be linked. `root`: the checkout to run
 * (another one gives a benchmark its reference).
 */
export const startService = async (dataDir: string, port: number, root = ownRoot): Promise<ServiceProcess> => {
  // a clean environment, so a developer's or CI's DATABASE_URL etc. play no part
  const child = spawn(join(root, "node_modules/.bin/tsx"), ["src/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, GIT_ALLOWED_HOSTS: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}): ${output}`)
    const up = await fetch(`http://127.0.0.1:${port}/api/v1/status`).then((r) => r.ok, () => false)
    if (up) break
    if (Date.now() > deadline) throw new Error(`the service did not start: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const admin = (await readFile(join(dataDir, "admin-key"), "utf8")).trim()
  const call = (method: string, path: string, json?: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      ...(json === undefined ? {} : { body: JSON.stringify(json) })
    })
  return { child, output: () => output, exited, call }
}
