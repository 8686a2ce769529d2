/**
 * The service under benchmark, in a child process of its own as `npm start` runs it (the compiled service,
 * built first when needed), so its pid is the server's; its memory read from /proc;
 * a fresh PostgreSQL schema per run when DATABASE_URL is set.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"
import { baseEnv, createSchema, freePort, type makeHousekeeping, startCommand, waitForStatus } from "./Util.js"

export interface Service {
  readonly child: ChildProcess
  readonly pid: number
  readonly baseUrl: string
  readonly logPath: string
  readonly exited: Promise<void>
}

const HUGE_LIMIT = "1000000000"
const StatusBody = Schema.Struct({ data: Schema.Struct({ status: Schema.Literal("ok") }) })

/** Starts services and PostgreSQL schemas that the housekeeping stops and drops on every exit path. */
export const serviceRunner = (
  housekeeping: ReturnType<typeof makeHousekeeping>,
  options: { readonly root: string; readonly cpuProfDir?: string | undefined }
) => {
  const startService = async (
    dataDir: string,
    adminKey: string,
    databaseUrl: string | undefined,
    label: string,
    logPath: string,
    extraEnv: NodeJS.ProcessEnv = {},
    /** Another checkout to run (a benchmark's reference); the runner's root by default. */
    root: string = options.root
  ): Promise<Service> => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const env: NodeJS.ProcessEnv = {
      ...baseEnv(),
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ADMIN_API_KEY: adminKey,
      PUBLIC_BASE_URL: baseUrl,
      // the benchmark's git server is on loopback, which git traffic may reach only when allowed
      GIT_ALLOWED_HOSTS: "127.0.0.1",
      RATE_LIMIT_ADMIN_PER_MINUTE: HUGE_LIMIT,
      RATE_LIMIT_ADMIN_PER_DAY: HUGE_LIMIT,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...extraEnv
    }
    // one directory per label: node names the files itself, one per thread (the main one and tsx's loader)
    const profile = options.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${join(options.cpuProfDir, `service-${label}`)}`] : []
    const log = openSync(logPath, "a")
    const { flags, entry } = startCommand(root)
    const child = spawn(process.execPath, [...flags, ...profile, ...entry], {
      cwd: root,
      env,
      stdio: ["ignore", log, log],
      detached: true
    })
    closeSync(log)
    housekeeping.children.add(child)
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    if (child.pid === undefined) throw new Error("the service did not start")
    const service: Service = { child, pid: child.pid, baseUrl, logPath, exited }
    await waitForStatus(service, "the service", StatusBody, 100)
    return service
  }

  const freshSchema = async (baseUrl: string, label: string): Promise<string> => {
    const created = await createSchema(baseUrl, `bench_${label}`, 5_000)
    housekeeping.cleanups.push(created.drop)
    return created.url
  }

  return { startService, freshSchema }
}

/** VmHWM and VmRSS of a process, in MiB. */
export const memoryOf = (pid: number): { readonly hwm: number; readonly rss: number } => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)
    return m?.[1] ? Number(m[1]) / 1024 : Number.NaN
  }
  return { hwm: kib("VmHWM"), rss: kib("VmRSS") }
}

/** Reset the process's VmHWM to its current RSS (Linux >= 4.0: `5` to /proc/<pid>/clear_refs); false when refused. */
export const resetHwm = (pid: number): boolean => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}
