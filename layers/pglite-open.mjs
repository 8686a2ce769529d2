// How the service opens PGlite, shared by its worker thread (pglite-worker.mjs) and the process that creates a new
// data directory (pglite-init.mjs). Plain JavaScript: both start from files every runner loads as is.
import { PGlite } from "@electric-sql/pglite"

// PostgreSQL's 128 MB of shared buffers are all touched at open (~125 MB resident); the data files are in the OS's
// page cache anyway. 32 MB: bench:push's drain of 3,000 queued writes 5-9 % slower than with 128 (paired runs: 435
// and 436 against 477 and 458 commits/s), 16 MB 15 % slower, for ~95 MB less resident (README "Operating": memory)
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=32MB"]

export const openPglite = (dataDir) => PGlite.create(dataDir ? { dataDir, startParams } : { startParams })
