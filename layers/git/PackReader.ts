import { createHash } from "node:crypto"
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs"
import { join } from "node:path"
import { inflateSync } from "node:zlib"

/**
 * Reads git objects of an on-disk repository straight from its pack files
 * (through their .idx) and loose objects, with node's native zlib and SHA-1.
 *
 * isomorphic-git's own reads cost about a millisecond per object (a JS inflate,
 * a directory listing and fresh file-system wrappers per call, the whole pack
 * loaded and hashed once per cache), which dominated a pull of thousands of
 * files. This reader is an accelerator only: every object it returns has been
 * checked against its id (SHA-1 of `<type> <size>\0<content>`), and callers fall
 * back to isomorphic-git whenever it returns nothing or throws.
 */

export type ObjectType = "commit" | "tree" | "blob" | "tag"

export interface GitObject {
  readonly type: ObjectType
  readonly content: Buffer
}

export interface ObjectReader {
  /** The object, checked against `oid`; undefined when the store does not hold it. Throws on a damaged store. */
  readonly read: (oid: string) => GitObject | undefined
  /**
   * Close the pack files opened so far and drop the indexes and cached bases
   * (the reader may still be used: they are read again). This also happens by
   * itself after a moment without reads, so idle labs hold no file descriptors.
   */
  readonly close: () => void
}

interface Pack {
  readonly path: string
  readonly idx: Buffer
  readonly count: number
  fd: number | undefined
  size: number
}

/** Pack entry types (git's pack format): the four object types, and the two kinds of delta. */
export const TYPES: Readonly<Record<number, ObjectType>> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" }
export const OFS_DELTA = 6
export const REF_DELTA = 7
export const IDX_MAGIC = 0xff744f63
const LOOSE_TYPES: Readonly<Record<string, ObjectType>> = { commit: "commit", tree: "tree", blob: "blob", tag: "tag" }

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

/** The header of the pack entry that starts at `start` of `bytes`. */
export const readEntryHeader = (bytes: Buffer, start: number): EntryHeader => {
  let pos = start
  let byte = bytes.readUInt8(pos++)
  const kind = (byte >>> 4) & 7
  let size = byte & 0x0f
  let scale = 16
  while (byte & 0x80) {
    byte = bytes.readUInt8(pos++)
    size += (byte & 0x7f) * scale
    scale *= 128
  }
  let distance: number | undefined
  let baseId: string | undefined
  if (kind === OFS_DELTA) {
    byte = bytes.readUInt8(pos++)
    distance = byte & 0x7f
    while (byte & 0x80) {
      byte = bytes.readUInt8(pos++)
      distance = (distance + 1) * 128 + (byte & 0x7f)
    }
  } else if (kind === REF_DELTA) {
    baseId = bytes.toString("hex", pos, pos + 20)
    pos += 20
  }
  return { kind, size, distance, baseId, dataStart: pos }
}
const FANOUT = 8
const HASHES = FANOUT + 256 * 4
/** Delta bases kept resolved while a job reads (a chain shares its bases). */
const BASE_CACHE_BYTES = 32 * 1024 * 1024
/** Pack files (and cached bases) are let go once the reader has been idle this long. */
const IDLE_CLOSE_MILLIS = 2_000

/** Parse a version-2 .idx; undefined for anything else (then isomorphic-git reads that pack). */
const parseIdx = (idx: Buffer): { readonly count: number } | undefined => {
  if (idx.length < HASHES + 40 || idx.readUInt32BE(0) !== IDX_MAGIC || idx.readUInt32BE(4) !== 2) return undefined
  const count = idx.readUInt32BE(HASHES - 4)
  // hashes, CRCs and offsets, then the large offsets and two checksums
  return idx.length >= HASHES + count * 28 + 40 ? { count } : undefined
}

/** The pack offset of `oid` (20 bytes), or undefined. */
const find = (pack: Pack, oid: Buffer): number | undefined => {
  const first = oid.readUInt8(0)
  let lo = first === 0 ? 0 : pack.idx.readUInt32BE(FANOUT + (first - 1) * 4)
  let hi = pack.idx.readUInt32BE(FANOUT + first * 4)
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const at = HASHES + mid * 20
    const order = pack.idx.compare(oid, 0, 20, at, at + 20)
    if (order === 0) {
      const offsets = HASHES + pack.count * 24
      const offset = pack.idx.readUInt32BE(offsets + mid * 4)
      if ((offset & 0x80000000) === 0) return offset
      const large = offsets + pack.count * 4 + (offset & 0x7fffffff) * 8
      return Number(pack.idx.readBigUInt64BE(large))
    }
    // `order` is how the idx entry sorts against oid
    if (order > 0) hi = mid
    else lo = mid + 1
  }
  return undefined
}

/** git's copy/insert delta format. */
export const applyDelta = (delta: Buffer, base: Buffer): Buffer => {
  let pos = 0
  const size = () => {
    let value = 0
    let scale = 1
    for (;;) {
      const byte = delta.readUInt8(pos++)
      value += (byte & 0x7f) * scale
      scale *= 128
      if ((byte & 0x80) === 0) return value
    }
  }
  if (size() !== base.length) throw new Error("delta base size mismatch")
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
      if (offset + length > base.length || written + length > out.length) throw new Error("delta copy out of range")
      base.copy(out, written, offset, offset + length)
      written += length
    } else if (op > 0) {
      if (pos + op > delta.length || written + op > out.length) throw new Error("delta insert out of range")
      delta.copy(out, written, pos, pos + op)
      pos += op
      written += op
    } else {
      throw new Error("delta opcode 0")
    }
  }
  if (written !== out.length) throw new Error("delta result size mismatch")
  return out
}

const idOf = (type: ObjectType, content: Buffer): string =>
  createHash("sha1").update(`${type} ${content.length}\0`, "latin1").update(content).digest("hex")

export const openObjectReader = (gitdir: string): ObjectReader => {
  let packs: Array<Pack> | undefined
  const bases = new Map<string, GitObject>()
  let baseBytes = 0

  const scan = (): Array<Pack> => {
    const dir = join(gitdir, "objects", "pack")
    const known = new Map((packs ?? []).map((p) => [p.path, p]))
    const found: Array<Pack> = []
    let names: Array<string>
    try {
      names = readdirSync(dir)
    } catch {
      names = []
    }
    for (const name of names) {
      if (!name.endsWith(".idx")) continue
      const path = join(dir, name.slice(0, -4))
      const existing = known.get(path)
      if (existing) {
        found.push(existing)
        continue
      }
      const idx = readFileSync(`${path}.idx`)
      const parsed = parseIdx(idx)
      if (parsed) found.push({ path, idx, count: parsed.count, fd: undefined, size: 0 })
    }
    packs = found
    return found
  }

  const fdOf = (pack: Pack): number => {
    if (pack.fd === undefined) {
      pack.fd = openSync(`${pack.path}.pack`, "r")
      pack.size = fstatSync(pack.fd).size
    }
    return pack.fd
  }

  const readBytes = (pack: Pack, position: number, length: number): Buffer => {
    const fd = fdOf(pack)
    const end = Math.min(position + length, pack.size - 20)
    const buffer = Buffer.allocUnsafe(Math.max(0, end - position))
    let done = 0
    while (done < buffer.length) {
      const n = readSync(fd, buffer, done, buffer.length - done, position + done)
      if (n === 0) break
      done += n
    }
    return buffer.subarray(0, done)
  }

  /** Inflate the zlib stream at `position` whose result is `size` bytes. */
  const inflateAt = (pack: Pack, position: number, size: number): Buffer => {
    // deflate output of `size` bytes rarely exceeds this; a stream cut short is read again whole
    const guess = size + (size >>> 3) + 64
    let out: Buffer
    try {
      out = inflateSync(readBytes(pack, position, guess))
    } catch {
      out = inflateSync(readBytes(pack, position, pack.size))
    }
    if (out.length !== size) throw new Error(`pack entry at ${position}: ${out.length} bytes, expected ${size}`)
    return out
  }

  const remember = (key: string, object: GitObject) => {
    if (object.content.length > BASE_CACHE_BYTES / 4) return
    bases.set(key, object)
    baseBytes += object.content.length
    for (const [k, v] of bases) {
      if (baseBytes <= BASE_CACHE_BYTES) break
      bases.delete(k)
      baseBytes -= v.content.length
    }
  }

  /** The object stored at `offset` of `pack` (deltas resolved), not yet checked against an id. */
  const readAt = (pack: Pack, offset: number, depth: number): GitObject => {
    if (depth > 4096) throw new Error("delta chain too deep")
    const { kind, size, distance, baseId, dataStart } = readEntryHeader(readBytes(pack, offset, 32), 0)
    const plain = TYPES[kind]
    if (plain !== undefined) return { type: plain, content: inflateAt(pack, offset + dataStart, size) }
    let base: GitObject
    if (distance !== undefined) {
      const baseOffset = offset - distance
      if (baseOffset < 12 || baseOffset >= offset) throw new Error(`pack entry at ${offset}: bad delta base offset`)
      const key = `${pack.path}:${baseOffset}`
      const cached = bases.get(key)
      if (cached) {
        base = cached
      } else {
        base = readAt(pack, baseOffset, depth + 1)
        remember(key, base)
      }
    } else if (baseId !== undefined) {
      const found = read(baseId)
      if (!found) throw new Error(`pack entry at ${offset}: delta base ${baseId} is missing`)
      base = found
    } else {
      throw new Error(`pack entry at ${offset}: unknown type ${kind}`)
    }
    return { type: base.type, content: applyDelta(inflateAt(pack, offset + dataStart, size), base.content) }
  }

  const readLoose = (oid: string): GitObject | undefined => {
    let raw: Buffer
    try {
      raw = readFileSync(join(gitdir, "objects", oid.slice(0, 2), oid.slice(2)))
    } catch {
      return undefined
    }
    const data = inflateSync(raw)
    const nul = data.indexOf(0)
    const match = /^(commit|tree|blob|tag) (\d+)$/.exec(data.subarray(0, Math.max(0, nul)).toString("latin1"))
    const type = LOOSE_TYPES[match?.[1] ?? ""]
    if (nul === -1 || !match?.[2] || type === undefined) throw new Error(`loose object ${oid} has no valid header`)
    const content = data.subarray(nul + 1)
    if (content.length !== Number(match[2])) throw new Error(`loose object ${oid} is damaged`)
    return { type, content }
  }

  const locate = (oid: Buffer, list: ReadonlyArray<Pack>): { readonly pack: Pack; readonly offset: number } | undefined => {
    for (const pack of list) {
      const offset = find(pack, oid)
      if (offset !== undefined) return { pack, offset }
    }
    return undefined
  }

  let lastUse = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  const closeWhenIdle = () => {
    idleTimer = undefined
    const idle = Date.now() - lastUse
    if (idle >= IDLE_CLOSE_MILLIS) close()
    else armIdleTimer(IDLE_CLOSE_MILLIS - idle)
  }
  const armIdleTimer = (millis: number) => {
    idleTimer = setTimeout(closeWhenIdle, millis)
    idleTimer.unref()
  }

  const read = (oid: string): GitObject | undefined => {
    lastUse = Date.now()
    if (idleTimer === undefined) armIdleTimer(IDLE_CLOSE_MILLIS)
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined
    const key = Buffer.from(oid, "hex")
    const at = locate(key, packs ?? scan()) ?? locate(key, scan())
    const object = at ? readAt(at.pack, at.offset, 0) : readLoose(oid)
    if (object === undefined) return undefined
    if (idOf(object.type, object.content) !== oid) throw new Error(`object ${oid} does not match its id`)
    return object
  }

  const close = () => {
    if (idleTimer !== undefined) clearTimeout(idleTimer)
    idleTimer = undefined
    for (const pack of packs ?? []) {
      if (pack.fd !== undefined) closeSync(pack.fd)
      pack.fd = undefined
    }
    packs = undefined
    bases.clear()
    baseBytes = 0
  }

  return { read, close }
}

/** Objects handed to `withPreloaded` are kept only up to this many bytes in all. */
const PRELOADED_BYTES = 256 * 1024 * 1024

/**
 * A reader that first hands out objects already in memory (a first clone's, its
 * ids computed from their content), each once: it is dropped when read. Then
 * it reads the store. Beyond PRELOADED_BYTES nothing is kept.
 */
export const withPreloaded = (reader: ObjectReader, objects: ReadonlyMap<string, GitObject>): ObjectReader => {
  let bytes = 0
  for (const object of objects.values()) bytes += object.content.length
  const preloaded = bytes <= PRELOADED_BYTES ? new Map(objects) : new Map<string, GitObject>()
  return {
    read: (oid) => {
      const object = preloaded.get(oid)
      if (object === undefined) return reader.read(oid)
      preloaded.delete(oid)
      return object
    },
    close: () => {
      preloaded.clear()
      reader.close()
    }
  }
}
