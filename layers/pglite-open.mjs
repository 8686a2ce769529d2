// How the service opens PGlite, shared by its worker thread (pglite-worker.mjs) and the process that creates a new
// data directory (pglite-init.mjs). Plain JavaScript: both start from files every runner loads as is.
import { PGlite } from "@electric-sql/pglite"

// PostgreSQL's 128 MB of shared buffers are all touched at open (~125 MB resident); the data files are in the OS's
// page cache anyway, so 16 MB keeps an idle service small (README "Operating": memory)
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"]

export const openPglite = (dataDir) => PGlite.create(dataDir ? { dataDir, startParams } : { startParams })
