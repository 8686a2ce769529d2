import { Effect } from "effect"
import type { ActivityRepo } from "../activity/ActivityRepo.js"
import type { Head } from "./Git.js"

/** A file of the repository the sync left out by its content, though git does not call it binary, and why. */
export interface LeftOutFile {
  readonly path: string
  readonly reason: string
}

/** Files named in one entry's data at most (its `count` has them all); the message names the first few. */
const LISTED = 100
const IN_MESSAGE = 3

/**
 * One activity entry `sync.skipped` for a pull that left out files git shows as text (a NUL byte after the first
 * 8,000 bytes, invalid UTF-8) or would not measure (over 1 MiB): they are counted under `skipped` like binary
 * files, and this says which and why, as `figure.synced` does for figures. In the pull's transaction.
 */
export const recordLeftOut = (
  deps: { readonly activity: ActivityRepo },
  labId: string,
  head: Head,
  files: ReadonlyArray<LeftOutFile>
) => {
  if (files.length === 0) return Effect.void
  const short = head.commit.slice(0, 7)
  const named = files.slice(0, IN_MESSAGE).map((f) => `${f.path} (${f.reason})`)
  const more = files.length > IN_MESSAGE ? `; ${files.length - IN_MESSAGE} more` : ""
  return deps.activity.record({
    labId,
    kind: "sync.skipped",
    ref: head.commit,
    actor: "sync",
    message: `Skipped ${files.length} file${files.length === 1 ? "" : "s"} the lab cannot hold (${short}): ${named.join("; ")}${more}`,
    data: { count: files.length, files: files.slice(0, LISTED), sha: short }
  })
}
