import { Either } from "effect"

export const MAX_PATH_LENGTH = 1024

/** `/a/b.md`: segments without NUL, backslash or empty, `.`, `..` ones (their dots then a slash or the end). */
const NORMAL = /^(?:\/(?!\.\.?(?:\/|$))[^/\\\0]+)+$/
const DOT_GIT = /(?:^|\/)\.git(?:\/|$)/i

/**
 * A lab file path as users write it (`/notes/a.md`), normalised: repeated
 * slashes collapse, `.` segments vanish, `..` segments climb. Refused: paths not
 * starting with `/`, escaping the root, naming a directory (trailing `/` or the
 * root itself), containing NUL or backslashes, or over 1,024 characters.
 */
export const normalizePath = (raw: string): Either.Either<string, string> => {
  // most paths are normal already (a sync checks every path of the tree)
  if (raw.length <= MAX_PATH_LENGTH && NORMAL.test(raw) && !DOT_GIT.test(raw)) return Either.right(raw)
  if (raw.length === 0) return Either.left("must not be empty")
  if (raw.length > MAX_PATH_LENGTH) return Either.left(`must be at most ${MAX_PATH_LENGTH} characters`)
  if (!raw.startsWith("/")) return Either.left("must start with /")
  if (raw.includes("\0")) return Either.left("must not contain NUL")
  if (raw.includes("\\")) return Either.left("must not contain backslashes")
  if (raw.endsWith("/")) return Either.left("must name a file, not a directory")
  const segments: Array<string> = []
  for (const segment of raw.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (segments.length === 0) return Either.left("must not escape the root")
      segments.pop()
      continue
    }
    segments.push(segment)
  }
  if (segments.length === 0) return Either.left("must name a file, not the root")
  // git refuses `.git` in any case (`.GIT/config` fails fsck's hasDotgit and checkout)
  if (segments.some((s) => s.toLowerCase() === ".git")) return Either.left("must not be inside .git")
  return Either.right(`/${segments.join("/")}`)
}

/** A directory prefix for listings: `/notes` and `/notes/` both mean the folder. */
export const normalizePrefix = (raw: string): Either.Either<string, string> => {
  if (raw === "") return Either.right("/")
  // normalised as the path of a child, so `//` and `/notes/..` mean the root too
  return Either.map(normalizePath(`${raw.replace(/\/+$/, "")}/_`), (p) => p.slice(0, -1))
}

/** `/notes/a.md` -> `notes/a.md`, the path inside the repository. */
export const toRepoPath = (path: string): string => path.slice(1)
export const fromRepoPath = (path: string): string => `/${path}`
