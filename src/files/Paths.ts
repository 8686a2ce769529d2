import { Either } from "effect"

const SLASH = 0x2f
const DOT = 0x2e
const SPACE = 0x20

/**
 * `text` without the characters at its end that `drop` matches. A loop rather than a regular expression: an
 * unanchored `/[. ]+$/` tries every run from each of its characters, quadratic in a long run that does not end the text.
 */
const trimEnd = (text: string, drop: (code: number) => boolean): string => {
  let end = text.length
  while (end > 0 && drop(text.charCodeAt(end - 1))) end--
  return end === text.length ? text : text.slice(0, end)
}

/** `/notes//` → `/notes`, in linear time. */
export const trimTrailingSlashes = (path: string): string => trimEnd(path, (c) => c === SLASH)

/** Bytes of UTF-8, not characters: a database index entry holds about 2,700 bytes, and 1,024 CJK characters are 3,072. */
export const MAX_PATH_BYTES = 1024

/** Within MAX_PATH_BYTES (counted only when the characters alone could be over: three bytes at most per UTF-16 unit). */
const fitsLength = (raw: string) => raw.length * 3 <= MAX_PATH_BYTES || Buffer.byteLength(raw, "utf8") <= MAX_PATH_BYTES

/** `/a/b.md`: segments without NUL, backslash or empty, `.`, `..` ones (their dots then a slash or the end). */
const NORMAL = /^(?:\/(?!\.\.?(?:\/|$))[^/\\\0]+)+$/
const DOT_GIT = /(?:^|\/)\.git(?:\/|$)/i

/** Code points HFS+ ignores in names (git's utf8.c next_hfs_char, isomorphic-git's GitTree). */
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g
/** A path with no segment that could name `.git` once cleaned: the common case, answered without splitting. */
const MIGHT_NAME_DOT_GIT = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]|(?:^|\/)\.?git(?:[~. :/]|$)/i

/**
 * Why git (or isomorphic-git, which pushes for us) refuses `name` as a tree
 * entry, or undefined when both accept it. A superset of git's verify_path with
 * core.protectNTFS and core.protectHFS on (read-cache.c verify_dotfile, path.c
 * is_ntfs_dotgit, utf8.c is_hfs_dotgit) and of isomorphic-git's
 * UnsafeFilepathError checks: `.git` in any case; with trailing dots or spaces,
 * or an NTFS stream (`.git::$INDEX_ALLOCATION`); its 8.3 short names `git~1`
 * (isomorphic-git: `git~1`…`git~9`, `.git~1`…); with code points HFS+ ignores
 * anywhere in it; `.` and `..` once those code points are dropped.
 */
export const gitRefusesName = (name: string): string | undefined => {
  const visible = name.replace(HFS_IGNORED, "")
  if (visible === "." || visible === "..") return `"${name}" is ${visible} once invisible code points are dropped`
  const stem = trimEnd((visible.split(":")[0] ?? "").toLowerCase(), (c) => c === DOT || c === SPACE)
  if (stem === ".git") {
    return name.toLowerCase() === ".git" ? `".git" is git's own directory` : `"${name}" names .git on Windows or macOS`
  }
  if (/^\.?git~[1-9]$/.test(stem)) return `"${name}" is the Windows short name of .git`
  return undefined
}

/** Why git refuses a path with a segment it will not store (see gitRefusesName), or undefined. */
export const gitRefusesPath = (path: string): string | undefined => {
  if (!MIGHT_NAME_DOT_GIT.test(path)) return undefined
  for (const segment of path.split("/")) {
    const refusal = gitRefusesName(segment)
    if (refusal !== undefined) return `must not contain a segment git refuses: ${refusal}`
  }
  return undefined
}

/**
 * A lab file path as users write it (`/notes/a.md`), normalised: repeated
 * slashes collapse, `.` segments vanish, `..` segments climb. Refused: paths not
 * starting with `/`, escaping the root, naming a directory (trailing `/` or the
 * root itself), containing NUL or backslashes, over 1,024 characters, or with
 * a segment git refuses (`gitRefusesPath`): the files API and the sync share
 * this one rule, so no write can be acknowledged that git will never commit.
 */
export const normalizePath = (raw: string): Either.Either<string, string> =>
  Either.flatMap(normalizePathShape(raw), (path) => {
    const refusal = gitRefusesPath(path)
    return refusal === undefined ? Either.right(path) : Either.left(refusal)
  })

/**
 * normalizePath with only the part of git's rule older versions applied (`.git`
 * itself, in any case): for naming files that may already be stored under a path
 * git refuses (written before the whole rule existed), to read or delete them.
 */
export const normalizePathShape = (raw: string): Either.Either<string, string> => {
  // most paths are normal already (a sync checks every path of the tree)
  if (fitsLength(raw) && NORMAL.test(raw) && !DOT_GIT.test(raw)) return Either.right(raw)
  if (raw.length === 0) return Either.left("must not be empty")
  if (!fitsLength(raw)) return Either.left(`must be at most ${MAX_PATH_BYTES} bytes of UTF-8`)
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
  // its length is checked before anything else looks at it (the child's name below adds two bytes)
  if (!fitsLength(raw)) return Either.left(`must be at most ${MAX_PATH_BYTES} bytes of UTF-8`)
  // normalised as the path of a child, so `//` and `/notes/..` mean the root too
  return Either.map(normalizePath(`${trimTrailingSlashes(raw)}/_`), (p) => p.slice(0, -1))
}

/** `/notes/a.md` -> `notes/a.md`, the path inside the repository. */
export const toRepoPath = (path: string): string => path.slice(1)
export const fromRepoPath = (path: string): string => `/${path}`
