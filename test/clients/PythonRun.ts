/**
 * Running python3 from a test: whether it is there (CI has it; where it is missing, the Python tests say so and are
 * skipped), and a run with the client on PYTHONPATH and the given environment, its output kept for a failure.
 */
import { spawn, spawnSync } from "node:child_process"
import * as path from "node:path"

export const repositoryRoot = path.resolve(import.meta.dirname, "..", "..")
export const pythonClientDir = path.join(repositoryRoot, "clients", "python")

export const hasPython = spawnSync("python3", ["--version"]).status === 0
if (!hasPython) console.warn("python3 is missing: the Python client's tests are skipped (CI has it)")

export interface PythonRun {
  readonly code: number | null
  readonly output: string
}

/** Run python3 with `args` (stdin from `input` when given), the client importable, and `env` added. */
export const runPython = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly cwd?: string; readonly input?: string; readonly timeoutMillis?: number } = {}
): Promise<PythonRun> =>
  new Promise((resolve, reject) => {
    const child = spawn("python3", [...args], {
      cwd: options.cwd ?? pythonClientDir,
      env: { ...process.env, PYTHONPATH: pythonClientDir, PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1", ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMillis ?? 240_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
    child.stdin.end(options.input ?? "")
  })
