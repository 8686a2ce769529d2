import { closeSync, openSync, writeSync } from "node:fs"
import { rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { CeilingExceeded } from "./PackFormat.js"
import { bufferAccess, type FileAccess, fileAccess, type RandomAccess } from "./RandomAccess.js"

/** A pack up to this size is kept in memory while it arrives; a bigger one goes to a file. */
const IN_MEMORY_PACK_BYTES = 64 * 1024 * 1024

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`

/**
 * Where a fetched pack's bytes go as they arrive, under the pack-size and
 * object-count ceilings: both are checked before the bytes are kept (the count
 * as soon as the pack's 12-byte header is in).
 */
export const makePackSink = (dir: string, limits: { readonly maxPackBytes: number; readonly maxObjects: number }) => {
  const temp = join(dir, `tmp-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}.pack`)
  let chunks: Array<Buffer> = []
  let size = 0
  let fd: number | undefined
  let file: FileAccess | undefined
  let counted = false

  // the spill and the writes after it stay synchronous: `write` is the receiving stream's callback (it keeps the
  // chunks in order without its own queue), and only a pack over IN_MEMORY_PACK_BYTES ever reaches the file
  const spill = () => {
    fd = openSync(temp, "w", 0o600)
    for (const chunk of chunks) writeSync(fd, chunk)
    chunks = []
  }

  return {
    write: (chunk: Buffer) => {
      size += chunk.length
      if (size > limits.maxPackBytes) {
        throw new CeilingExceeded(`the repository's pack is over ${mib(limits.maxPackBytes)}, the ceiling (GIT_MAX_PACK_BYTES)`)
      }
      if (fd === undefined) chunks.push(chunk)
      else writeSync(fd, chunk)
      if (!counted && size >= 12) {
        counted = true
        const head = fd === undefined ? Buffer.concat(chunks).subarray(0, 12) : undefined
        const count = head?.toString("latin1", 0, 4) === "PACK" ? head.readUInt32BE(8) : 0
        if (count > limits.maxObjects) {
          throw new CeilingExceeded(`the repository has ${count} objects, over the ceiling of ${limits.maxObjects} (GIT_MAX_OBJECTS)`)
        }
      }
      if (fd === undefined && size > IN_MEMORY_PACK_BYTES) spill()
    },
    /** The whole pack, by position. */
    finish: (): RandomAccess => {
      if (fd === undefined) {
        const whole = Buffer.concat(chunks)
        chunks = [whole]
        return bufferAccess(whole)
      }
      closeSync(fd)
      fd = undefined
      file = fileAccess(temp)
      return file
    },
    /** Store the pack at `path` (its final name). Written asynchronously: a pack kept in memory may be 64 MiB. */
    persist: async (path: string) => {
      if (file === undefined) {
        await writeFile(temp, Buffer.concat(chunks), { mode: 0o600 })
      } else {
        file.close()
      }
      await rename(temp, path)
      chunks = []
    },
    discard: async () => {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
      file?.close()
      chunks = []
      await rm(temp, { force: true })
    }
  }
}

export type PackSink = ReturnType<typeof makePackSink>
