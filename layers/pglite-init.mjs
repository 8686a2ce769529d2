// Creates a new PGlite data directory, then exits: `node pglite-init.mjs <dir> [--with-parent]`
// (layers/PgliteDataDir.ts, scripts/build.mjs). A process of its own because initdb's memory (~0.6 GB at its peak)
// is not all given back to the system when a thread ends: ~190 MB of it stayed with the service's process (glibc's
// per-thread arenas; measured in the issue 13 note). With --with-parent it ends when its standard input does, that is
// when the process that started it ends, however it ends (at its next turn of the event loop: initdb holds it ~2 s).
import { describeFailure, openPglite } from "./pglite-open.mjs"

const [dataDir, withParent] = process.argv.slice(2)
if (withParent === "--with-parent") process.stdin.on("end", () => process.exit(1)).on("error", () => process.exit(1)).resume()
try {
  const db = await openPglite(dataDir)
  await db.close()
  process.exit(0)
} catch (error) {
  process.stderr.write(`${describeFailure(error).message}\n`)
  process.exit(1)
}
