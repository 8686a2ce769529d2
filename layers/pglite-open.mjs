// How the service opens PGlite, shared by its worker thread (pglite-worker.mjs) and the process that creates a new
// data directory (pglite-init.mjs). Plain JavaScript: both start from files every runner loads as is.
import { PGlite } from "@electric-sql/pglite"

// PostgreSQL's 128 MB of shared buffers are all touched at open (~125 MB resident); the data files are in the OS's
// page cache anyway. 32 MB: bench:push's drain of 3,000 queued writes 5-9 % slower than with 128 (paired runs: 435
// and 436 against 477 and 458 commits/s), 16 MB 15 % slower, for ~95 MB less resident (README "Operating": memory)
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=32MB"]

export const openPglite = (dataDir) => PGlite.create(dataDir ? { dataDir, startParams } : { startParams })

// Emscripten's errno numbers, as PGlite's file system throws them (an ErrnoError has no message of its own)
const ERRNO = { 2: "EACCES", 29: "EIO", 44: "ENOENT", 51: "ENOSPC", 63: "EPERM", 69: "EROFS" }

/** A failure of PGlite as a message and, for a file system's, the system's code: ENOSPC is a full disk. */
export const describeFailure = (error) => {
  if (typeof error !== "object" || error === null) return { message: String(error) }
  if (error.name === "ErrnoError" && typeof error.errno === "number") {
    const code = ERRNO[error.errno] ?? `errno ${error.errno}`
    return { code, message: code === "ENOSPC" ? "no space left on device (ENOSPC)" : `file system error (${code})` }
  }
  return { message: typeof error.message === "string" ? error.message : String(error) }
}
