/** clients/typescript is an npm package of its own: `npm pack` builds it and ships the ESM build with its types. */
import { execFile } from "node:child_process"
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"

const packageDir = join(import.meta.dirname, "..", "..", "clients", "typescript")

const PackResult = Schema.Array(Schema.Struct({ files: Schema.Array(Schema.Struct({ path: Schema.String })) }))
const PackageJson = Schema.Struct({
  type: Schema.Literal("module"),
  exports: Schema.Struct({ ".": Schema.Struct({ types: Schema.String, import: Schema.String }) }),
  dependencies: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})

describe("the TypeScript client package", () => {
  it("packs with npm pack: the ESM build, its types, the sources and the README, and no runtime dependency", async () => {
    try {
      const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json"], { cwd: packageDir })
      const [packed] = Schema.decodeUnknownSync(PackResult)(JSON.parse(stdout))
      const files = (packed?.files ?? []).map((f) => f.path)
      expect(files).toEqual(
        expect.arrayContaining(["package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/generated/client.js", "src/core/transport.ts"])
      )
      const manifest = Schema.decodeUnknownSync(PackageJson)(JSON.parse(await readFile(join(packageDir, "package.json"), "utf8")))
      expect(files).toContain(manifest.exports["."].import.replace("./", ""))
      expect(files).toContain(manifest.exports["."].types.replace("./", ""))
      expect(Object.keys(manifest.dependencies ?? {})).toEqual([])
      // the build loads in plain Node, without tsx
      const loaded = await promisify(execFile)(
        process.execPath,
        ["--input-type=module", "-e", "const m = await import('./dist/index.js'); console.log(typeof m.LabServiceClient, typeof m.QuotaExceededError)"],
        { cwd: packageDir }
      )
      expect(loaded.stdout.trim()).toBe("function function")
    } finally {
      await rm(join(packageDir, "dist"), { recursive: true, force: true })
    }
  }, 120_000)
})
