/**
 * `npm run clients`: makes the official clients from the service's own
 * contract (the HttpApi definition → OpenAPI → scripts/clients/Model.ts).
 * `--check` writes nothing and exits 1 when a checked-in file differs from what
 * would be made now, or when a made file is missing.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildModel, type Model } from "./Model.js"
import { renderPython } from "./python.js"
import { renderTypeScript } from "./typescript.js"

export interface GeneratedFile {
  /** relative to the repository root */
  readonly path: string
  readonly text: string
}

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

/** Every file the clients are made of, in memory. */
export const renderClients = (model: Model = buildModel()): ReadonlyArray<GeneratedFile> => [
  ...renderTypeScript(model),
  ...renderPython(model)
]

/** The made files whose checked-in copy is missing or differs. */
export const staleFiles = (files: ReadonlyArray<GeneratedFile>, root = repositoryRoot): ReadonlyArray<string> =>
  files
    .filter((file) => {
      const target = path.join(root, file.path)
      return !fs.existsSync(target) || fs.readFileSync(target, "utf8") !== file.text
    })
    .map((file) => file.path)

const main = () => {
  const files = renderClients()
  if (process.argv.includes("--check")) {
    const stale = staleFiles(files)
    for (const file of stale) console.error(`stale: ${file} (run npm run clients)`)
    process.exit(stale.length === 0 ? 0 : 1)
  }
  for (const file of files) {
    const target = path.join(repositoryRoot, file.path)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, file.text)
  }
  console.log(`wrote ${files.length} files`)
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
