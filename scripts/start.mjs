// `npm start`: run the compiled service (dist/), building it first when it is missing or older than a source file,
// so `npm install && npm start` works on a fresh checkout; the running process loads no TypeScript compiler.
import { spawnSync } from "node:child_process"
import { readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const stamp = join(root, "dist", ".built")

const mtime = (path) => {
  try {
    return statSync(path).mtimeMs
  } catch {
    return undefined
  }
}

const newestSource = (dir) => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : (mtime(path) ?? 0))
  }
  return newest
}

const built = mtime(stamp)
const sources = Math.max(newestSource(join(root, "src")), newestSource(join(root, "layers")), mtime(join(root, "package-lock.json")) ?? 0)
if (built === undefined || built < sources) {
  console.error(built === undefined ? "no build yet: npm run build" : "sources changed since the last build: npm run build")
  const result = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
await import(pathToFileURL(join(root, "dist", "src", "main.js")).href)
