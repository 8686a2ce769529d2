import { blobId } from "../files/BlobId.js"
import { toRepoPath } from "../files/Paths.js"
import type { Change } from "./Git.js"
import type { OutboxEntry } from "./SyncRepo.js"

/** How outbox entries become the service's commits: one per entry, pushed a chunk at a time (README: "Auto-push"). */

/** Commits the service makes carry this identity (README: "Auto-push"). */
export const SERVICE_AUTHOR = { authorName: "Lab Service", authorEmail: "lab-service@users.noreply.local" }

/** Writes committed and pushed at a time: each chunk is one push, visible as soon as it lands. */
export const CHUNK_WRITES = 500
const CHUNK_BYTES = 32 * 1024 * 1024

/** The first entries, up to CHUNK_BYTES of content (at least one). */
export const chunkOf = (entries: ReadonlyArray<OutboxEntry>): ReadonlyArray<OutboxEntry> => {
  let bytes = 0
  const chunk: Array<OutboxEntry> = []
  for (const entry of entries) {
    bytes += entry.content === null ? 0 : entry.content.length
    if (chunk.length > 0 && bytes > CHUNK_BYTES) break
    chunk.push(entry)
  }
  return chunk
}

/** A name as git's author line can hold it: no angle brackets or line breaks, at most 200 characters. */
const authorLine = (name: string) => name.replace(/[<>\0-\x1f]+/g, " ").trim().slice(0, 200)

/** The commit's author: the credential that made the write (the service for writes queued before names were kept). */
const authorOf = (entry: OutboxEntry) => {
  const name = entry.authorName === null ? "" : authorLine(entry.authorName)
  if (name === "") return SERVICE_AUTHOR
  return { authorName: name, authorEmail: `${entry.actor.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100)}@users.noreply.local` }
}

export const changeOf = (entry: OutboxEntry): Change => {
  const verb = entry.content === null ? "Delete" : "Update"
  return {
    path: toRepoPath(entry.path),
    content: entry.content,
    info: {
      ...authorOf(entry),
      committerName: SERVICE_AUTHOR.authorName,
      committerEmail: SERVICE_AUTHOR.authorEmail,
      message: `${verb} ${toRepoPath(entry.path)}\n\nWritten through Lab Service by ${entry.actor}.\n`
    }
  }
}

/** Each path's last write in these entries, as the blob it leaves (a path last deleted has none). */
export const lastWrites = (entries: ReadonlyArray<OutboxEntry>) => {
  const last = new Map<string, string | null>()
  for (const entry of entries) last.set(entry.path, entry.content)
  return [...last].flatMap(([path, content]) => (content === null ? [] : [{ path, sha: blobId(content) }]))
}

