/**
 * Spec 4.4: which files of the repository a sync takes. Pure functions, so the
 * rules are tested directly and the engine only asks.
 */

/** At most 1 MiB (1,048,576 bytes) per file; the same bound as the files API. */
export const MAX_FILE_BYTES = 1_048_576

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

/**
 * Text, by content: git's rule (no NUL byte in the first 8,000 bytes) and valid
 * UTF-8, since PostgreSQL text accepts neither NUL nor invalid UTF-8. Returns the
 * text, or undefined for binary content.
 */
export const decodeText = (bytes: Uint8Array): string | undefined => {
  const head = bytes.subarray(0, 8000)
  if (head.includes(0)) return undefined
  try {
    const text = utf8.decode(bytes)
    return text.includes("\0") ? undefined : text
  } catch {
    return undefined
  }
}
