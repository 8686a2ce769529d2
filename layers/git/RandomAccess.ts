import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"

/**
 * Bytes read by position: a buffer in memory or a file on disk. Packs and the
 * large objects inside them (blobs over 1 MiB) go through this, so code that
 * resolves them never needs them whole in memory.
 */
export interface RandomAccess {
  readonly size: number
  /** Up to `length` bytes from `position` (fewer at the end). */
  readonly read: (position: number, length: number) => Buffer
}

export const bufferAccess = (buffer: Buffer): RandomAccess => ({
  size: buffer.length,
  read: (position, length) => buffer.subarray(position, Math.min(buffer.length, position + length))
})

/** A file opened for reading by position; `close` releases its descriptor. */
export interface FileAccess extends RandomAccess {
  readonly close: () => void
}

export const fileAccess = (path: string): FileAccess => {
  let fd: number | undefined = openSync(path, "r")
  const size = fstatSync(fd).size
  const descriptor = () => {
    if (fd === undefined) fd = openSync(path, "r")
    return fd
  }
  return {
    size,
    read: (position, length) => {
      const end = Math.min(size, position + length)
      const buffer = Buffer.allocUnsafe(Math.max(0, end - position))
      let done = 0
      while (done < buffer.length) {
        const n = readSync(descriptor(), buffer, done, buffer.length - done, position + done)
        if (n === 0) break
        done += n
      }
      return buffer.subarray(0, done)
    },
    close: () => {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    }
  }
}

/**
 * Scratch files for one job (a pack being indexed): large objects spilled to
 * disk so they can be read by position. Everything goes when the job ends.
 */
export interface Scratch {
  /** A new file that `write` appends to; `done` turns it into a RandomAccess. */
  readonly create: () => { readonly write: (chunk: Uint8Array) => void; readonly done: () => FileAccess }
  readonly dispose: () => void
}

export const makeScratch = (parent: string): Scratch => {
  let dir: string | undefined
  const opened: Array<FileAccess> = []
  let count = 0
  return {
    create: () => {
      dir ??= mkdtempSync(join(parent, "lab-service-scratch-"))
      const path = join(dir, `object-${count++}`)
      const fd = openSync(path, "w", 0o600)
      return {
        write: (chunk) => {
          let done = 0
          while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done)
        },
        done: () => {
          closeSync(fd)
          const access = fileAccess(path)
          opened.push(access)
          return access
        }
      }
    },
    dispose: () => {
      for (const access of opened) access.close()
      opened.length = 0
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
      dir = undefined
    }
  }
}
