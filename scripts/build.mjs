// `npm run build`: src/ and layers/ compiled to dist/ (tsconfig.build.json), the worker scripts copied beside them, and
// a new PGlite data directory made (dist/pglite-template) for first starts to copy.
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const compiled = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { cwd: root, stdio: "inherit" })
if (compiled.status !== 0) process.exit(compiled.status ?? 1)
mkdirSync(join(root, "dist", "layers"), { recursive: true })
for (const name of readdirSync(join(root, "layers")).filter((n) => n.endsWith(".mjs"))) {
  copyFileSync(join(root, "layers", name), join(root, "dist", "layers", name))
}
// a new embedded database starts as a copy of this one instead of running initdb (layers/PgliteWorker.ts)
const template = join(root, "dist", "pglite-template")
rmSync(template, { recursive: true, force: true })
const initdb = spawnSync(process.execPath, [join(root, "dist", "layers", "pglite-init.mjs"), template], { cwd: root, stdio: "inherit" })
if (initdb.status === 0) {
  // owner-only modes (PGlite writes 0666 files): a first start copies the template into DATA_DIR
  const { makePrivate } = await import(pathToFileURL(join(root, "dist", "layers", "PgliteDataDir.js")).href)
  await makePrivate(template)
} else {
  rmSync(template, { recursive: true, force: true })
  console.error("no PGlite template (initdb failed): a first start will run initdb itself")
}
writeFileSync(join(root, "dist", ".built"), `${new Date().toISOString()}\n`)
