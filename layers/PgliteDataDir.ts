import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { chmod, cp, readdir, rename, rm, stat } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const INIT_FILE = fileURLToPath(new URL("./pglite-init.mjs", import.meta.url))

/**
 * A new PGlite data directory at `dataDir`: a copy of the one the build made (`templateDir`; initdb took 2.6 s of a
 * first start's ~5.5 here), else made by initdb in a process of its own (pglite-init.mjs: the memory initdb takes
 * stays with it). Either is made beside `dataDir`, made private, and only then moved into place, PG_VERSION last, so
 * a start stopped halfway leaves nothing that looks made and nothing readable by others.
 */
export const createDataDir = async (dataDir: string, templateDir: string, signal: AbortSignal): Promise<void> => {
  const staging = `${dataDir}.new`
  await rm(staging, { recursive: true, force: true })
  try {
    if (existsSync(join(templateDir, "PG_VERSION"))) await cp(templateDir, staging, { recursive: true })
    else await initdb(staging, signal)
    await makePrivate(staging)
    await moveIntoPlace(staging, dataDir)
  } finally {
    // what is left of it, if anything; a failure here must not hide the first one
    await rm(staging, { recursive: true, force: true }).catch(() => undefined)
  }
}

/** `node pglite-init.mjs <dir>`, killed when `signal` aborts or this process ends; its last 4 KB of stderr is the failure. */
const initdb = (dir: string, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [INIT_FILE, dir, "--with-parent"], { stdio: ["pipe", "ignore", "pipe"], signal, killSignal: "SIGKILL" })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096)
    })
    child.once("error", reject)
    child.once("close", (code, killed) => (code === 0 ? resolve() : reject(new Error(`initdb (${killed ?? `exit ${code}`}): ${stderr.trim()}`))))
  })

const MOVE_INSTEAD = new Set(["ENOTEMPTY", "EEXIST", "EXDEV", "EBUSY"])

/** A rename, or where `dataDir` is there already (a volume mounted on it, what an earlier start left) a copy into it. */
const moveIntoPlace = async (staging: string, dataDir: string) => {
  try {
    await rename(staging, dataDir)
  } catch (error) {
    const code = error instanceof Error && "code" in error ? error.code : undefined
    if (typeof code !== "string" || !MOVE_INSTEAD.has(code)) throw error
    const version = join(staging, "PG_VERSION")
    await cp(staging, dataDir, { recursive: true, force: true, filter: (source) => source !== version })
    await cp(version, join(dataDir, "PG_VERSION"))
  }
}

/**
 * PGlite writes its initial data directory with modes of its own (0666 files
 * whatever the umask) and rewrites pg_internal.init 0644 when it opens; the
 * files PostgreSQL creates later are 0600. Once open, nothing in it is left
 * readable by other users.
 */
export const makePrivate = async (dir: string): Promise<void> => {
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
