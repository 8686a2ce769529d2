import { createHash } from "node:crypto"
import type { RandomAccess } from "./RandomAccess.js"

/** git's pack and delta formats: entry headers, deltas applied in memory or by position. */

export type ObjectType = "commit" | "tree" | "blob" | "tag"

export interface GitObject {
  readonly type: ObjectType
  readonly content: Buffer
}

/** Pack entry types (git's pack format): the four object types, and the two kinds of delta. */
export const TYPES: Readonly<Record<number, ObjectType>> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" }
export const OFS_DELTA = 6
export const REF_DELTA = 7

/** A damaged or unexpected pack. Messages are fixed descriptions, safe to show. */
export class PackError extends Error {}

/** A pack over a ceiling. The message names the ceiling: it is safe to show. */
export class CeilingExceeded extends Error {}

/** A thin pack's delta names a base that neither the pack nor the store holds. */
export class MissingBase extends PackError {}

export interface EntryHeader {
  readonly kind: number
  /** Inflated size: the object's, or its delta's. */
  readonly size: number
  /** OFS_DELTA: how far before the entry its base starts. */
  readonly distance: number | undefined
  /** REF_DELTA: its base's id. */
  readonly baseId: string | undefined
  /** Where the entry's zlib data starts in `bytes`. */
  readonly dataStart: number
}

/** The header of the pack entry that starts at `start` of `bytes` (read for every entry: no closures, no allocations). */
export const readEntryHeader = (bytes: Buffer, start: number): EntryHeader => {
  let pos = start
  if (pos >= bytes.length) throw new PackError("a pack entry header is cut short")
  let byte = bytes[pos++] ?? 0
  const kind = (byte >>> 4) & 7
  let size = byte & 0x0f
  let scale = 16
  while (byte & 0x80) {
    if (pos >= bytes.length || scale > 2 ** 49) throw new PackError("a pack entry header is cut short or declares an impossible size")
    byte = bytes[pos++] ?? 0
    size += (byte & 0x7f) * scale
    scale *= 128
  }
  let distance: number | undefined
  let baseId: string | undefined
  if (kind === OFS_DELTA) {
    if (pos >= bytes.length) throw new PackError("a pack entry header is cut short")
    byte = bytes[pos++] ?? 0
    distance = byte & 0x7f
    while (byte & 0x80) {
      if (pos >= bytes.length || distance > 2 ** 45) throw new PackError("a pack entry header is cut short or declares an impossible base")
      byte = bytes[pos++] ?? 0
      distance = (distance + 1) * 128 + (byte & 0x7f)
    }
  } else if (kind === REF_DELTA) {
    if (pos + 20 > bytes.length) throw new PackError("a pack entry header is cut short")
    baseId = bytes.toString("hex", pos, pos + 20)
    pos += 20
  }
  return { kind, size, distance, baseId, dataStart: pos }
}

/** Reads a delta's bytes in order, by position, a window at a time. */
const deltaCursor = (delta: RandomAccess) => {
  let window: Buffer = Buffer.alloc(0)
  let windowStart = 0
  let pos = 0
  const fill = (need: number) => {
    if (pos >= windowStart && pos + need <= windowStart + window.length) return
    windowStart = pos
    window = delta.read(pos, Math.max(need, 64 * 1024))
    if (window.length < need) throw new PackError("a delta is cut short")
  }
  return {
    done: () => pos >= delta.size,
    byte: () => {
      fill(1)
      return window.readUInt8(pos++ - windowStart)
    },
    bytes: (n: number) => {
      fill(Math.min(n, 64 * 1024))
      const available = Math.min(n, windowStart + window.length - pos)
      const out = window.subarray(pos - windowStart, pos - windowStart + available)
      pos += available
      return out
    }
  }
}

type Cursor = ReturnType<typeof deltaCursor>

const varint = (next: () => number) => {
  let value = 0
  let scale = 1
  for (;;) {
    const byte = next()
    value += (byte & 0x7f) * scale
    scale *= 128
    if ((byte & 0x80) === 0) return value
    if (scale > 2 ** 56) throw new PackError("a delta declares an impossible size")
  }
}

/** A delta's base and result sizes, from its first bytes. */
export const deltaSizes = (head: Buffer): { readonly baseSize: number; readonly resultSize: number } => {
  let pos = 0
  const sizes = [0, 0]
  for (let k = 0; k < 2; k++) {
    let value = 0
    let scale = 1
    for (;;) {
      if (pos >= head.length || scale > 2 ** 49) throw new PackError("a delta's header is cut short or declares an impossible size")
      const byte = head[pos++] ?? 0
      value += (byte & 0x7f) * scale
      scale *= 128
      if ((byte & 0x80) === 0) break
    }
    sizes[k] = value
  }
  return { baseSize: sizes[0] ?? 0, resultSize: sizes[1] ?? 0 }
}

/** Walk a delta's copy and insert operations, handing each piece of the result to `emit`. */
const walkDelta = (cursor: Cursor, base: RandomAccess, emit: (piece: Buffer) => void): number => {
  if (varint(cursor.byte) !== base.size) throw new PackError("a delta does not fit its base")
  const resultSize = varint(cursor.byte)
  let written = 0
  while (!cursor.done()) {
    const op = cursor.byte()
    if (op & 0x80) {
      let offset = 0
      let length = 0
      if (op & 0x01) offset += cursor.byte()
      if (op & 0x02) offset += cursor.byte() * 0x100
      if (op & 0x04) offset += cursor.byte() * 0x10000
      if (op & 0x08) offset += cursor.byte() * 0x1000000
      if (op & 0x10) length += cursor.byte()
      if (op & 0x20) length += cursor.byte() * 0x100
      if (op & 0x40) length += cursor.byte() * 0x10000
      if (length === 0) length = 0x10000
      if (offset + length > base.size || written + length > resultSize) throw new PackError("a delta copies out of range")
      for (let done = 0; done < length; ) {
        const piece = base.read(offset + done, Math.min(length - done, 1 << 20))
        if (piece.length === 0) throw new PackError("a delta's base is cut short")
        emit(piece)
        done += piece.length
      }
      written += length
    } else if (op > 0) {
      if (written + op > resultSize) throw new PackError("a delta inserts out of range")
      for (let left = op; left > 0; ) {
        const piece = cursor.bytes(left)
        if (piece.length === 0) throw new PackError("a delta is cut short")
        emit(piece)
        left -= piece.length
      }
      written += op
    } else {
      throw new PackError("a delta has opcode 0")
    }
  }
  if (written !== resultSize) throw new PackError("a delta's result has the wrong size")
  return resultSize
}

/** git's copy/insert delta format, in memory (the common case: a tight loop, no windows). */
export const applyDelta = (delta: Buffer, base: Buffer): Buffer => {
  let pos = 0
  const size = () => {
    let value = 0
    let scale = 1
    for (;;) {
      if (pos >= delta.length) throw new PackError("a delta is cut short")
      const byte = delta.readUInt8(pos++)
      value += (byte & 0x7f) * scale
      scale *= 128
      if ((byte & 0x80) === 0) return value
    }
  }
  if (size() !== base.length) throw new PackError("a delta does not fit its base")
  const out = Buffer.allocUnsafe(size())
  let written = 0
  while (pos < delta.length) {
    const op = delta.readUInt8(pos++)
    if (op & 0x80) {
      let offset = 0
      let length = 0
      if (op & 0x01) offset += delta.readUInt8(pos++)
      if (op & 0x02) offset += delta.readUInt8(pos++) * 0x100
      if (op & 0x04) offset += delta.readUInt8(pos++) * 0x10000
      if (op & 0x08) offset += delta.readUInt8(pos++) * 0x1000000
      if (op & 0x10) length += delta.readUInt8(pos++)
      if (op & 0x20) length += delta.readUInt8(pos++) * 0x100
      if (op & 0x40) length += delta.readUInt8(pos++) * 0x10000
      if (length === 0) length = 0x10000
      if (offset + length > base.length || written + length > out.length) throw new PackError("a delta copies out of range")
      base.copy(out, written, offset, offset + length)
      written += length
    } else if (op > 0) {
      if (pos + op > delta.length || written + op > out.length) throw new PackError("a delta inserts out of range")
      delta.copy(out, written, pos, pos + op)
      pos += op
      written += op
    } else {
      throw new PackError("a delta has opcode 0")
    }
  }
  if (written !== out.length) throw new PackError("a delta's result has the wrong size")
  return out
}

/** The same, by position: the delta and its base may be files, the result goes to `emit` in pieces. */
export const applyDeltaStreaming = (delta: RandomAccess, base: RandomAccess, emit: (piece: Buffer) => void): number =>
  walkDelta(deltaCursor(delta), base, emit)

/** `<type> <size>\0<content>`, hashed: an object's id. */
export const objectId = (type: ObjectType, content: Buffer): string =>
  createHash("sha1").update(`${type} ${content.length}\0`, "latin1").update(content).digest("hex")

/** An object id computed piece by piece, for objects never held whole. */
export const objectIdHasher = (type: ObjectType, size: number) => {
  const hash = createHash("sha1").update(`${type} ${size}\0`, "latin1")
  return { update: (piece: Uint8Array) => void hash.update(piece), digest: () => hash.digest("hex") }
}
