import { constants, createInflate, inflateSync } from "node:zlib"
import { PackError } from "./PackFormat.js"
import type { RandomAccess } from "./RandomAccess.js"

/**
 * The zlib streams of a pack's entries. A pack does not say where an entry's
 * compressed data ends, only how big it inflates to; and that size is the
 * sender's word. Every inflate here stops at the declared size (a stream that
 * inflates to more is a damaged pack, not a reason to grow memory).
 */

interface InflateInfo {
  readonly buffer: Buffer
  readonly engine: { readonly bytesWritten: number }
}

const isInflateInfo = (value: unknown): value is InflateInfo =>
  typeof value === "object" &&
  value !== null &&
  "buffer" in value &&
  Buffer.isBuffer(value.buffer) &&
  "engine" in value &&
  typeof value.engine === "object" &&
  value.engine !== null &&
  "bytesWritten" in value.engine &&
  typeof value.engine.bytesWritten === "number"

const isCutShort = (cause: unknown) => cause instanceof Error && "code" in cause && cause.code === "Z_BUF_ERROR"

/**
 * Inflate the stream at `start` into exactly `size` bytes, in memory (for objects
 * small enough to hold): the content and how many compressed bytes it took.
 */
export const inflateEntry = (source: RandomAccess, start: number, size: number): { readonly content: Buffer; readonly consumed: number } => {
  // compressed data rarely exceeds this; a stream cut short by the guess is read again with more
  let want = size + (size >>> 3) + 64
  for (;;) {
    const input = source.read(start, want)
    let result: unknown
    try {
      // an output chunk of the expected size: zlib's default 16 KiB per call was most of the indexing's allocations
      result = inflateSync(input, { info: true, chunkSize: Math.max(64, size + 1), maxOutputLength: Math.max(1, size) })
    } catch (cause) {
      if (isCutShort(cause) && input.length === want && start + want < source.size) {
        want *= 2
        continue
      }
      throw new PackError(cause instanceof RangeError ? "a pack entry inflates to more than it declares" : "a pack entry does not inflate")
    }
    if (!isInflateInfo(result)) throw new PackError("zlib gave no stream length")
    if (result.buffer.length !== size) throw new PackError("a pack entry inflates to another size than it declares")
    return { content: result.buffer, consumed: result.engine.bytesWritten }
  }
}

/**
 * At least the first `need` bytes the stream at `start` inflates to (a delta's
 * or a loose object's header), without inflating the rest: a little input at a
 * time (a compressed block's own header may take a hundred bytes), and never
 * more output than that input can make.
 */
export const inflatePrefix = (source: RandomAccess, start: number, need: number): Buffer => {
  let before = -1
  for (const take of [256, 4096, 65_536]) {
    const input = source.read(start, take)
    let out: Buffer
    try {
      // deflate expands at most 1032:1
      out = inflateSync(input, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: take * 1100 })
    } catch {
      throw new PackError("a pack entry does not inflate")
    }
    // a stream shorter than `need` (a tiny delta, a small loose object) ends: more input makes no more output
    if (out.length >= need || input.length < take || out.length === before) return out
    before = out.length
  }
  throw new PackError("a pack entry does not inflate")
}

/** Compressed bytes handed to zlib at a time when streaming. */
const STREAM_CHUNK = 256 * 1024

/**
 * Inflate the stream at `start`, which must come to exactly `size` bytes, handing
 * the output to `emit` piece by piece: memory stays flat whatever the size.
 * Answers how many compressed bytes the stream took.
 */
export const inflateStreaming = (source: RandomAccess, start: number, size: number, emit: (piece: Buffer) => void): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const inflate = createInflate({ chunkSize: 1 << 20 })
    let produced = 0
    let given = 0
    let failed = false
    const fail = (error: PackError) => {
      if (failed) return
      failed = true
      inflate.destroy()
      reject(error)
    }
    inflate.on("data", (piece: Buffer) => {
      produced += piece.length
      if (produced > size) return fail(new PackError("a pack entry inflates to more than it declares"))
      emit(piece)
    })
    inflate.on("error", () => fail(new PackError("a pack entry does not inflate")))
    inflate.on("end", () => {
      if (failed) return
      if (produced !== size) return fail(new PackError("a pack entry inflates to another size than it declares"))
      resolve(inflate.bytesWritten)
    })
    const feed = () => {
      if (failed) return
      // zlib stops taking input at the stream's end: then nothing more is fed
      if (inflate.bytesWritten < given || start + given >= source.size) {
        inflate.end()
        return
      }
      const chunk = source.read(start + given, STREAM_CHUNK)
      given += chunk.length
      inflate.write(chunk, () => feed())
    }
    feed()
  })
