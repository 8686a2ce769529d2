// Creates a new PGlite data directory, then exits: `node pglite-init.mjs <dir>` (layers/PgliteWorker.ts). A process
// of its own because initdb's memory (~0.6 GB at its peak) is not all given back to the system when a thread ends:
// ~190 MB of it stayed with the service's process (glibc's per-thread arenas; measured in the issue 13 note).
import { openPglite } from "./pglite-open.mjs"

const dataDir = process.argv[2]
try {
  const db = await openPglite(dataDir)
  await db.close()
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
