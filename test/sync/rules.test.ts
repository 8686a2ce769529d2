import { describe, expect, it } from "vitest"
import { decodeText, isRegularFile, isSkippedPath, judgeContent, MAX_FILE_BYTES } from "../../src/sync/Rules.js"

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))))

describe("MAX_FILE_BYTES", () => {
  it("is 1 MiB", () => {
    expect(MAX_FILE_BYTES).toBe(1_048_576)
  })
})

describe("isSkippedPath (repository paths, no leading slash)", () => {
  const skipped: ReadonlyArray<string> = [
    // the directories, at the top and at any depth
    "node_modules/react/index.js",
    "web/node_modules/react/package.json",
    "a/b/c/node_modules/x/y/z.md",
    ".next/server/page.js",
    "apps/site/.next/cache/x.json",
    "dist/index.js",
    "packages/core/dist/index.d.ts",
    "build/report.md",
    "docs/build/html/index.html",
    // the lockfiles, at the top and at any depth
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "packages/a/package-lock.json",
    "apps/web/yarn.lock",
    "deep/er/pnpm-lock.yaml",
    // minified bundles
    "app.min.js",
    "static/js/vendor.min.js",
    "style.min.css",
    "assets/css/theme.min.css"
  ]

  const synced: ReadonlyArray<string> = [
    "README.md",
    "notes/idea.md",
    "src/main.py",
    "paper/main.tex",
    "data/results.csv",
    "analysis.ipynb",
    "package.json",
    // merely named like a skipped directory, or containing its name
    "build",
    "dist",
    "node_modules",
    "notes/build",
    "dist.md",
    "build.py",
    "docs/dist.md",
    "scripts/build.sh",
    "builds/x.md",
    "my-dist/x.md",
    "distribution/x.md",
    "node_modules_backup/x.js",
    "next/x.js",
    ".nextrc",
    // near-misses of the lockfiles and bundles
    "package-lock.json.md",
    "my-yarn.lock.txt",
    "pnpm-lock.yml",
    "yarn.lock.bak",
    "app.js",
    "min.js",
    "app.min.jsx",
    "style.css",
    "notes/min.css.md"
  ]

  const cases = [...skipped.map((path) => ["skips", path, true] as const), ...synced.map((path) => ["syncs", path, false] as const)]
  it.each(cases)("%s %s", (_, path, isSkipped) => {
    expect(isSkippedPath(path)).toBe(isSkipped)
  })
})

describe("isRegularFile", () => {
  it.each([
    ["blob", "100644"],
    ["blob", "100755"]
  ])("takes a %s with mode %s", (type, mode) => {
    expect(isRegularFile({ type, mode })).toBe(true)
  })

  it.each([
    ["a symlink", "blob", "120000"],
    ["a submodule", "commit", "160000"],
    ["a tree", "tree", "040000"],
    ["a blob with a tree mode", "blob", "040000"],
    ["a commit with a file mode", "commit", "100644"]
  ])("refuses %s (%s %s)", (_, type, mode) => {
    expect(isRegularFile({ type, mode })).toBe(false)
  })
})

describe("decodeText", () => {
  it("takes an empty file as empty text", () => {
    expect(decodeText(new Uint8Array(0))).toBe("")
  })

  it("takes ASCII and valid multi-byte UTF-8 as text, unchanged", () => {
    expect(decodeText(bytes("# Notes\n\nline 2\r\n"))).toBe("# Notes\n\nline 2\r\n")
    const multi = "café · 研究ノート · 😀 · ∑x²\n"
    expect(decodeText(bytes(multi))).toBe(multi)
  })

  it("keeps a UTF-8 byte-order mark, so the text is byte-for-byte the blob", () => {
    const withBom = bytes([0xef, 0xbb, 0xbf], "id,value\n1,2\n")
    const text = decodeText(withBom)
    expect(text).toBe("\uFEFFid,value\n1,2\n")
    expect(Buffer.from(text ?? "", "utf8").equals(Buffer.from(withBom))).toBe(true)
  })

  it("refuses a NUL byte anywhere in the first 8,000 bytes as binary", () => {
    expect(decodeText(bytes([0]))).toBeUndefined()
    expect(decodeText(bytes("abc", [0], "def"))).toBeUndefined()
    expect(decodeText(bytes("a".repeat(7999), [0], "tail"))).toBeUndefined()
    // a PNG header
    expect(decodeText(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]))).toBeUndefined()
  })

  it("refuses a NUL byte after the first 8,000 bytes too: PostgreSQL text cannot hold it", () => {
    const late = bytes("a".repeat(8000), [0], "tail")
    expect(late.indexOf(0)).toBe(8000)
    expect(decodeText(late)).toBeUndefined()
    expect(decodeText(bytes("a".repeat(100_000), [0]))).toBeUndefined()
  })

  it("refuses invalid UTF-8 as binary", () => {
    expect(decodeText(bytes([0xff, 0xfe, 0x41]))).toBeUndefined() // not UTF-8 at all
    expect(decodeText(bytes("caf", [0xe9]))).toBeUndefined() // Latin-1 é
    expect(decodeText(bytes("ok ", [0xe2, 0x82]))).toBeUndefined() // truncated sequence at the end
    expect(decodeText(bytes([0xc0, 0xaf]))).toBeUndefined() // overlong encoding
    expect(decodeText(bytes([0xed, 0xa0, 0x80]))).toBeUndefined() // an encoded surrogate
    expect(decodeText(bytes("a".repeat(9000), [0x80]))).toBeUndefined() // beyond the first 8,000 bytes
  })

  it("takes a large text file whole", () => {
    const big = "line of text\n".repeat(80_000)
    expect(decodeText(bytes(big))).toBe(big)
  })
})

describe("judgeContent", () => {
  it("says binary only by git's rule, and gives the reason for what git shows as text but the lab cannot hold", () => {
    expect(judgeContent(3, bytes("ab\n"))).toEqual({ kind: "text", text: "ab\n" })
    expect(judgeContent(8001, bytes("a".repeat(7999), [0], "b"))).toEqual({ kind: "binary" })
    expect(judgeContent(9002, bytes("a".repeat(9000), [0], "b"))).toEqual({
      kind: "left-out",
      reason: expect.stringMatching(/^a NUL byte at offset 9000: git counts it as text/)
    })
    expect(judgeContent(4, bytes("caf", [0xe9]))).toEqual({ kind: "left-out", reason: expect.stringMatching(/^not valid UTF-8/) })
    expect(judgeContent(MAX_FILE_BYTES + 1, undefined)).toEqual({
      kind: "left-out",
      reason: expect.stringMatching(/^larger than 1 MiB \(1048577 bytes/)
    })
  })
})
