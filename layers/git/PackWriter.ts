import { createHash } from "node:crypto"
import { crc32, deflateSync } from "node:zlib"
import type { IdxEntry } from "./PackIdx.js"
import { OFS_DELTA, REF_DELTA, type ObjectType } from "./PackFormat.js"

/**
 * Writes a version-2 pack of objects the service made (commits, trees, blobs):
 * whole, or as a delta on a base, an earlier object of the pack (OFS_DELTA) or
 * one the receiver already holds (REF_DELTA: a thin pack, as git pushes).
 */
export type PackObject =
  | { readonly kind: "whole"; readonly id: string; readonly type: ObjectType; readonly content: Buffer }
  | { readonly kind: "delta"; readonly id: string; readonly baseId: string; readonly delta: Buffer }

/**
 * An entry copied from another pack as it is stored there: its data already deflated (the size is the inflated
 * one, as the entry's header says). Merging packs copies entries so, without inflating or deflating anything.
 */
export type CopiedObject =
  | { readonly kind: "copied"; readonly id: string; readonly type: ObjectType; readonly size: number; readonly deflated: Buffer }
  | { readonly kind: "copied-delta"; readonly id: string; readonly baseId: string; readonly size: number; readonly deflated: Buffer }

const TYPE_CODES: Readonly<Record<ObjectType, number>> = { commit: 1, tree: 2, blob: 3, tag: 4 }

/** An entry's header: its type code and size, 4 bits then 7 per byte. */
export const entryHeader = (code: number, size: number): Buffer => {
  const bytes: Array<number> = []
  let byte = (code << 4) | (size & 0x0f)
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    bytes.push(byte | 0x80)
    byte = rest & 0x7f
    rest = Math.floor(rest / 128)
  }
  bytes.push(byte)
  return Buffer.from(bytes)
}

/** git's encoding of how far back an OFS_DELTA's base starts. */
const distanceBytes = (distance: number): Buffer => {
  const bytes = [distance & 0x7f]
  let rest = Math.floor(distance / 128)
  while (rest > 0) {
    rest -= 1
    bytes.unshift(0x80 | (rest & 0x7f))
    rest = Math.floor(rest / 128)
  }
  return Buffer.from(bytes)
}

export interface WrittenPack {
  readonly pack: Buffer
  /** The pack's own checksum (its trailer). */
  readonly checksum: Buffer
  /** Each object's id, offset and CRC-32, for the .idx. */
  readonly entries: ReadonlyArray<IdxEntry>
}

export const writePack = (objects: ReadonlyArray<PackObject | CopiedObject>): WrittenPack => {
  const head = Buffer.alloc(12)
  head.write("PACK", 0, "latin1")
  head.writeUInt32BE(2, 4)
  head.writeUInt32BE(objects.length, 8)
  const parts: Array<Buffer> = [head]
  const entries: Array<IdxEntry> = []
  const offsets = new Map<string, number>()
  let offset = 12
  for (const object of objects) {
    let header: Buffer
    let deflated: Buffer
    if (object.kind === "whole" || object.kind === "copied") {
      const size = object.kind === "whole" ? object.content.length : object.size
      header = entryHeader(TYPE_CODES[object.type], size)
      // fast compression: a push is written once and sent at once; text still shrinks severalfold
      deflated = object.kind === "whole" ? deflateSync(object.content, { level: 1 }) : object.deflated
    } else {
      const size = object.kind === "delta" ? object.delta.length : object.size
      const baseOffset = offsets.get(object.baseId)
      header =
        baseOffset === undefined
          ? Buffer.concat([entryHeader(REF_DELTA, size), Buffer.from(object.baseId, "hex")])
          : Buffer.concat([entryHeader(OFS_DELTA, size), distanceBytes(offset - baseOffset)])
      deflated = object.kind === "delta" ? deflateSync(object.delta, { level: 1 }) : object.deflated
    }
    entries.push({ id: object.id, offset, crc: crc32(deflated, crc32(header)) })
    offsets.set(object.id, offset)
    parts.push(header, deflated)
    offset += header.length + deflated.length
  }
  const body = Buffer.concat(parts)
  const checksum = createHash("sha1").update(body).digest()
  return { pack: Buffer.concat([body, checksum]), checksum, entries }
}
