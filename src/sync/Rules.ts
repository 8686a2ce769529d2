/**
 * Spec 4.4: which files of the repository a sync takes. Pure functions, so the
 * rules are tested directly and the engine only asks.
 */

import { MAX_FILE_BYTES } from "../files/File.js"

/** The files API's bound on a file, which a pulled file must meet too. */
export { MAX_FILE_BYTES }

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".next", "dist", "build"])
const LOCKFILES = new Set(["package-lock.json", "yarn.lock", "pnpm-lock.yaml"])
const MIGHT_SKIP = /node_modules|\.next|dist|build|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|\.min\.(?:js|css)$/

/** Skipped by path alone: those directories at any depth, the lockfiles, minified bundles. */
export const isSkippedPath = (repoPath: string): boolean => {
  // the common case without splitting: no skipped name anywhere in the path
  if (!MIGHT_SKIP.test(repoPath)) return false
  const segments = repoPath.split("/")
  const name = segments.at(-1) ?? ""
  if (segments.slice(0, -1).some((dir) => SKIPPED_DIRECTORIES.has(dir))) return true
  if (LOCKFILES.has(name)) return true
  return name.endsWith(".min.js") || name.endsWith(".min.css")
}

/** Symlinks (120000) and submodules (commits) are not files. */
export const isRegularFile = (entry: { readonly type: string; readonly mode: string }): boolean =>
  entry.type === "blob" && (entry.mode === "100644" || entry.mode === "100755")

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }) // keep a BOM: the text must be the blob, byte for byte

/** git's rule: a NUL byte in the first 8,000 bytes makes a file binary (images, PDFs, archives). */
const GIT_BINARY_PROBE = 8000

/**
 * What a blob is to the sync: text (a file of the lab), binary by git's own rule, or left out for a reason a user
 * would not guess from git (which shows it as text, or does not look: too large), stated in `reason`.
 */
export type Content =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "binary" }
  | { readonly kind: "left-out"; readonly reason: string }

/**
 * Text, by content: git's rule (no NUL byte in the first 8,000 bytes) and valid UTF-8 with no NUL anywhere, since
 * PostgreSQL text accepts neither NUL nor invalid UTF-8. `bytes` is undefined for a blob over MAX_FILE_BYTES.
 */
export const judgeContent = (size: number, bytes: Uint8Array | undefined): Content => {
  if (bytes === undefined || size > MAX_FILE_BYTES) {
    return { kind: "left-out", reason: `larger than 1 MiB (${size} bytes; files of the lab hold at most ${MAX_FILE_BYTES})` }
  }
  if (bytes.subarray(0, GIT_BINARY_PROBE).includes(0)) return { kind: "binary" }
  const nul = bytes.indexOf(0, GIT_BINARY_PROBE)
  if (nul !== -1) {
    return {
      kind: "left-out",
      reason: `a NUL byte at offset ${nul}: git counts it as text (no NUL in the first 8,000 bytes), but the database stores text without NUL`
    }
  }
  try {
    return { kind: "text", text: utf8.decode(bytes) }
  } catch {
    return { kind: "left-out", reason: "not valid UTF-8: the database stores UTF-8 text only" }
  }
}

/** The text of a file the sync takes, or undefined for content it leaves out (see judgeContent). */
export const decodeText = (bytes: Uint8Array): string | undefined => {
  const content = judgeContent(bytes.byteLength, bytes)
  return content.kind === "text" ? content.text : undefined
}
