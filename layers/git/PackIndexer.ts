import { createHash } from "node:crypto"
import { crc32, inflateSync } from "node:zlib"
import { applyDelta, type GitObject, IDX_MAGIC, type ObjectType, readEntryHeader, TYPES } from "./PackReader.js"

/**
 * Builds the version-2 .idx of a complete (not thin) pack with node's native
 * zlib and SHA-1: the ids of its objects, their offsets and CRC-32s. git's
 * `index-pack` does the same; isomorphic-git's JS indexing of a first clone took
 * seconds per ten thousand files.
 */

export class PackError extends Error {}

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

/** Inflate the zlib stream at the start of `input` into `size` bytes: its content and how many input bytes it took. */
const inflateHead = (input: Buffer, size: number): { readonly content: Buffer; readonly consumed: number } => {
  // an output chunk of the expected size: zlib's default 16 KiB per call was most of the indexing's allocations
  const result: unknown = inflateSync(input, { info: true, chunkSize: Math.max(64, size + 1) })
  if (!isInflateInfo(result)) throw new PackError("zlib gave no stream length")
  return { content: result.buffer, consumed: result.engine.bytesWritten }
}

interface Entry {
  readonly offset: number
  readonly crc: number
  /** Inflated data: the object's content, or a delta. */
  readonly data: Buffer
  readonly type: ObjectType | undefined
  readonly baseOffset: number | undefined
  readonly baseId: string | undefined
}

/** Read every entry of the pack: headers, inflated data, CRC-32 of the raw bytes. */
const readEntries = (pack: Buffer): Array<Entry> => {
  if (pack.length < 32 || pack.toString("latin1", 0, 4) !== "PACK") throw new PackError("not a pack")
  const version = pack.readUInt32BE(4)
  if (version !== 2 && version !== 3) throw new PackError(`pack version ${version}`)
  const end = pack.length - 20
  const checksum = createHash("sha1").update(pack.subarray(0, end)).digest()
  if (!checksum.equals(pack.subarray(end))) throw new PackError("pack checksum mismatch")
  const count = pack.readUInt32BE(8)
  const entries: Array<Entry> = []
  let pos = 12
  for (let i = 0; i < count; i++) {
    const offset = pos
    if (pos >= end) throw new PackError("pack ends early")
    const { kind, size, distance, baseId, dataStart } = readEntryHeader(pack, pos)
    pos = dataStart
    const baseOffset = distance === undefined ? undefined : offset - distance
    if (baseOffset !== undefined && baseOffset < 12) throw new PackError(`entry at ${offset}: bad delta base offset`)
    if (distance === undefined && baseId === undefined && TYPES[kind] === undefined) {
      throw new PackError(`entry at ${offset}: unknown type ${kind}`)
    }
    const { content, consumed } = inflateHead(pack.subarray(pos, end), size)
    if (content.length !== size) throw new PackError(`entry at ${offset}: ${content.length} bytes, expected ${size}`)
    pos += consumed
    entries.push({ offset, crc: crc32(pack.subarray(offset, pos)), data: content, type: TYPES[kind], baseOffset, baseId })
  }
  if (pos !== end) throw new PackError("pack has trailing bytes")
  return entries
}

const idOf = (type: ObjectType, content: Buffer): string =>
  createHash("sha1").update(`${type} ${content.length}\0`, "latin1").update(content).digest("hex")

export interface IndexedPack {
  /** The pack's own checksum (hex): its name is pack-<checksum>.pack. */
  readonly checksum: string
  readonly idx: Buffer
  /** The pack's objects by id, inflated and resolved (a first sync reads them next: no second inflate). */
  readonly objects: ReadonlyMap<string, GitObject>
}

/** Resolve every object's id (deltas applied to their bases) and build the .idx. */
export const indexPack = (pack: Buffer): IndexedPack => {
  const entries = readEntries(pack)
  const byOffset = new Map<number, number>()
  entries.forEach((e, i) => byOffset.set(e.offset, i))
  const ids: Array<string | undefined> = new Array(entries.length)
  const resolved = new Map<number, GitObject>()
  const byId = new Map<string, number>()
  const objects = new Map<string, GitObject>()

  // bases are resolved once and kept while a delta may still need them; a pack lists a delta after its
  // offset base, so walking in order resolves every OFS_DELTA chain; REF_DELTAs wait for their base's id
  const resolve = (i: number, depth: number): GitObject | undefined => {
    const known = resolved.get(i)
    if (known) return known
    const entry = entries[i]
    if (entry === undefined || depth > 10_000) throw new PackError("delta chain too deep")
    let object: GitObject
    if (entry.type !== undefined) {
      object = { type: entry.type, content: entry.data }
    } else {
      const baseIndex = entry.baseOffset !== undefined ? byOffset.get(entry.baseOffset) : entry.baseId !== undefined ? byId.get(entry.baseId) : undefined
      if (baseIndex === undefined) {
        if (entry.baseOffset !== undefined) throw new PackError(`entry at ${entry.offset}: no entry at its base offset`)
        return undefined
      }
      const base = resolve(baseIndex, depth + 1)
      if (base === undefined) return undefined
      object = { type: base.type, content: applyDelta(entry.data, base.content) }
    }
    resolved.set(i, object)
    const id = idOf(object.type, object.content)
    ids[i] = id
    byId.set(id, i)
    objects.set(id, object)
    return object
  }

  let unresolved = entries.map((_, i) => i)
  while (unresolved.length > 0) {
    const left = unresolved.filter((i) => resolve(i, 0) === undefined)
    if (left.length === unresolved.length) throw new PackError("a delta's base is not in the pack (a thin pack)")
    unresolved = left
  }
  return { checksum: pack.toString("hex", pack.length - 20), idx: buildIdx(entries, ids, pack.subarray(pack.length - 20)), objects }
}

const buildIdx = (entries: ReadonlyArray<Entry>, ids: ReadonlyArray<string | undefined>, packChecksum: Buffer): Buffer => {
  const n = entries.length
  const order = entries.map((_, i) => i).sort((a, b) => ((ids[a] ?? "") < (ids[b] ?? "") ? -1 : 1))
  const large = entries.filter((e) => e.offset >= 0x80000000).length
  const out = Buffer.alloc(8 + 1024 + n * 28 + large * 8 + 40)
  out.writeUInt32BE(IDX_MAGIC, 0)
  out.writeUInt32BE(2, 4)
  const fanout = new Uint32Array(256)
  for (const id of ids) {
    const first = Number.parseInt((id ?? "").slice(0, 2), 16)
    fanout[first] = (fanout[first] ?? 0) + 1
  }
  let total = 0
  for (let b = 0; b < 256; b++) {
    total += fanout[b] ?? 0
    out.writeUInt32BE(total, 8 + b * 4)
  }
  const hashes = 8 + 1024
  const crcs = hashes + n * 20
  const offsets = crcs + n * 4
  const larges = offsets + n * 4
  let nextLarge = 0
  order.forEach((i, k) => {
    const entry = entries[i]
    if (entry === undefined) return
    out.write(ids[i] ?? "", hashes + k * 20, "hex")
    out.writeUInt32BE(entry.crc, crcs + k * 4)
    if (entry.offset < 0x80000000) {
      out.writeUInt32BE(entry.offset, offsets + k * 4)
    } else {
      out.writeUInt32BE((0x80000000 | nextLarge) >>> 0, offsets + k * 4)
      out.writeBigUInt64BE(BigInt(entry.offset), larges + nextLarge * 8)
      nextLarge++
    }
  })
  const trailer = larges + large * 8
  packChecksum.copy(out, trailer)
  createHash("sha1").update(out.subarray(0, trailer + 20)).digest().copy(out, trailer + 20)
  return out
}
