import { createHash } from "node:crypto"

/** git's version-2 pack index (.idx): built for a pack we index, searched by the reader. */

export const IDX_MAGIC = 0xff744f63
const FANOUT = 8
const HASHES = FANOUT + 256 * 4

/** One indexed entry: its id, where it starts in the pack, the CRC-32 of its raw bytes. */
export interface IdxEntry {
  readonly id: string
  readonly offset: number
  readonly crc: number
}

export const buildIdx = (entries: ReadonlyArray<IdxEntry>, packChecksum: Buffer): Buffer => {
  const n = entries.length
  const order = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const large = entries.filter((e) => e.offset >= 0x80000000).length
  const out = Buffer.alloc(8 + 1024 + n * 28 + large * 8 + 40)
  out.writeUInt32BE(IDX_MAGIC, 0)
  out.writeUInt32BE(2, 4)
  const fanout = new Uint32Array(256)
  for (const entry of order) {
    const first = Number.parseInt(entry.id.slice(0, 2), 16)
    fanout[first] = (fanout[first] ?? 0) + 1
  }
  let total = 0
  for (let b = 0; b < 256; b++) {
    total += fanout[b] ?? 0
    out.writeUInt32BE(total, FANOUT + b * 4)
  }
  const crcs = HASHES + n * 20
  const offsets = crcs + n * 4
  const larges = offsets + n * 4
  let nextLarge = 0
  order.forEach((entry, k) => {
    out.write(entry.id, HASHES + k * 20, "hex")
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

/** The number of objects of a version-2 .idx; undefined for anything else (then isomorphic-git reads that pack). */
export const idxCount = (idx: Buffer): number | undefined => {
  if (idx.length < HASHES + 40 || idx.readUInt32BE(0) !== IDX_MAGIC || idx.readUInt32BE(4) !== 2) return undefined
  const count = idx.readUInt32BE(HASHES - 4)
  // hashes, CRCs and offsets, then the large offsets and two checksums
  return idx.length >= HASHES + count * 28 + 40 ? count : undefined
}

/** The pack offset of `oid` (20 bytes) in an .idx of `count` objects, or undefined. */
export const idxFind = (idx: Buffer, count: number, oid: Buffer): number | undefined => {
  const first = oid.readUInt8(0)
  let lo = first === 0 ? 0 : idx.readUInt32BE(FANOUT + (first - 1) * 4)
  let hi = idx.readUInt32BE(FANOUT + first * 4)
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const at = HASHES + mid * 20
    const order = idx.compare(oid, 0, 20, at, at + 20)
    if (order === 0) {
      const offsets = HASHES + count * 24
      const offset = idx.readUInt32BE(offsets + mid * 4)
      if ((offset & 0x80000000) === 0) return offset
      const large = offsets + count * 4 + (offset & 0x7fffffff) * 8
      return Number(idx.readBigUInt64BE(large))
    }
    // `order` is how the idx entry sorts against oid
    if (order > 0) hi = mid
    else lo = mid + 1
  }
  return undefined
}

/** Every object of an .idx of `count` objects: its id and pack offset. */
export const idxEntries = (idx: Buffer, count: number): Array<{ readonly id: string; readonly offset: number }> => {
  const offsets = HASHES + count * 24
  const entries: Array<{ readonly id: string; readonly offset: number }> = []
  for (let k = 0; k < count; k++) {
    const raw = idx.readUInt32BE(offsets + k * 4)
    const offset = (raw & 0x80000000) === 0 ? raw : Number(idx.readBigUInt64BE(offsets + count * 4 + (raw & 0x7fffffff) * 8))
    entries.push({ id: idx.toString("hex", HASHES + k * 20, HASHES + k * 20 + 20), offset })
  }
  return entries
}
