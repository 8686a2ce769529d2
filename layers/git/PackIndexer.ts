import { createHash } from "node:crypto"
import { crc32 } from "node:zlib"
import { MAX_FILE_BYTES } from "../../src/sync/Rules.js"
import { inflateEntry, inflateStreaming } from "./Inflate.js"
import { buildIdx } from "./PackIdx.js"
import {
  applyDelta,
  applyDeltaStreaming,
  deltaSizes,
  type GitObject,
  objectId,
  objectIdHasher,
  type ObjectType,
  PackError,
  readEntryHeader,
  TYPES
} from "./PackFormat.js"
import { bufferAccess, makeScratch, type RandomAccess } from "./RandomAccess.js"

/**
 * Indexes a pack as git's `index-pack` does (the .idx: ids, offsets, CRC-32s),
 * with node's zlib and SHA-1, under ceilings checked before memory or CPU is
 * spent: objects (from the pack's header), and bytes inflated or rebuilt from
 * deltas (from each entry's declared size, before it is inflated). A blob over
 * the 1 MiB rule is never held in memory: it is streamed through SHA-1 to name
 * it, and spilled to a scratch file only when a delta needs it as a base.
 * A thin pack's deltas may name bases outside it (`external`: the lab's store).
 */

/** A pack over a ceiling. The message names the ceiling: it is safe to show. */
export class CeilingExceeded extends Error {}

/** A thin pack's delta names a base that neither the pack nor the store holds. */
export class MissingBase extends PackError {}

export interface IndexLimits {
  readonly maxObjects: number
  readonly maxInflatedBytes: number
  /** Small objects handed on to the first reads (IndexedPack.objects), up to this many bytes in all. */
  readonly keepBytes: number
}

/** An object outside the pack that a thin pack's delta builds on. */
export interface ExternalBase {
  readonly type: ObjectType
  readonly size: number
  readonly access: () => Promise<RandomAccess>
}

export interface IndexOptions {
  /** Where large objects may be spilled while the pack is indexed. */
  readonly scratchDir: string
  readonly external?: (oid: string) => ExternalBase | undefined
}

export interface IndexedPack {
  /** The pack's own checksum (hex): its name is pack-<checksum>.pack. */
  readonly checksum: string
  readonly idx: Buffer
  /** Small objects by id, inflated and resolved, up to `keepBytes` (a first sync reads them next: no second inflate). */
  readonly objects: ReadonlyMap<string, GitObject>
  /** Does the pack hold this object? */
  readonly contains: (id: string) => boolean
}

/** Blobs above this are never held whole in memory. */
const LARGE_BLOB = MAX_FILE_BYTES
/** Trees, commits and tags above this make the pack unusable (a tree this big lists about a million files). */
const MAX_METADATA_BYTES = 64 * 1024 * 1024
/** Deltas above this are inflated to a scratch file rather than into memory. */
const DELTA_IN_MEMORY = 8 * 1024 * 1024
/** Resolved small objects kept as delta bases beyond the ones handed on. */
const BASE_CACHE_BYTES = 32 * 1024 * 1024

interface Entry {
  readonly offset: number
  type: ObjectType | undefined
  size: number
  id: string | undefined
  crc: number
}

type Base = { readonly index: number } | { readonly external: ExternalBase }

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`

export const indexPack = async (pack: RandomAccess, limits: IndexLimits, options: IndexOptions): Promise<IndexedPack> => {
  const scratch = makeScratch(options.scratchDir)
  try {
    return await index(pack, limits, options, scratch)
  } catch (cause) {
    if (cause instanceof PackError || cause instanceof CeilingExceeded) throw cause
    throw new PackError("the pack is damaged")
  } finally {
    scratch.dispose()
  }
}

const index = async (pack: RandomAccess, limits: IndexLimits, options: IndexOptions, scratch: ReturnType<typeof makeScratch>): Promise<IndexedPack> => {
  const head = pack.read(0, 12)
  if (pack.size < 32 || head.toString("latin1", 0, 4) !== "PACK") throw new PackError("not a pack")
  const version = head.readUInt32BE(4)
  if (version !== 2 && version !== 3) throw new PackError(`pack version ${version}`)
  const count = head.readUInt32BE(8)
  if (count > limits.maxObjects) {
    throw new CeilingExceeded(`the repository has ${count} objects, over the ceiling of ${limits.maxObjects} (GIT_MAX_OBJECTS)`)
  }
  const end = pack.size - 20
  const trailer = pack.read(end, 20)
  if (!checksumOf(pack, end).equals(trailer)) throw new PackError("pack checksum mismatch")

  let inflated = 0
  const spend = (bytes: number) => {
    inflated += bytes
    if (inflated > limits.maxInflatedBytes) {
      throw new CeilingExceeded(
        `the repository inflates to more than ${mib(limits.maxInflatedBytes)}, the ceiling (GIT_MAX_INFLATED_BYTES)`
      )
    }
  }
  const entries: Array<Entry> = []
  const byOffset = new Map<number, number>()
  const byId = new Map<string, number>()
  const kept = new Map<string, GitObject>()
  let keptBytes = 0
  const cache = new Map<number, Buffer>()
  let cacheBytes = 0
  const spilled = new Map<number, RandomAccess>()

  const remember = (i: number, content: Buffer) => {
    const entry = entries[i]
    if (entry?.type === undefined || entry.id === undefined) return
    if (keptBytes + content.length <= limits.keepBytes) {
      kept.set(entry.id, { type: entry.type, content })
      keptBytes += content.length
      return
    }
    cache.set(entry.offset, content)
    cacheBytes += content.length
    for (const [offset, old] of cache) {
      if (cacheBytes <= BASE_CACHE_BYTES) break
      cache.delete(offset)
      cacheBytes -= old.length
    }
  }

  const isLarge = (type: ObjectType, size: number) => type === "blob" && size > LARGE_BLOB

  /** The data of the entry at `offset` (a delta, or a plain object), in memory or spilled, and where it ends. */
  const entryData = async (offset: number) => {
    const header = readEntryHeader(pack.read(offset, 64), 0)
    const start = offset + header.dataStart
    if (header.size <= DELTA_IN_MEMORY) {
      const { content, consumed } = inflateEntry(pack, start, header.size)
      return { header, data: bufferAccess(content), buffer: content, end: start + consumed }
    }
    const file = scratch.create()
    const consumed = await inflateStreaming(pack, start, header.size, file.write)
    return { header, data: file.done(), buffer: undefined, end: start + consumed }
  }

  const baseOf = (offset: number, header: ReturnType<typeof readEntryHeader>): Base | undefined => {
    if (header.distance !== undefined) {
      const index = byOffset.get(offset - header.distance)
      if (index === undefined) throw new PackError("a delta's base offset names no entry")
      return { index }
    }
    const id = header.baseId ?? ""
    const index = byId.get(id)
    if (index !== undefined) return { index }
    const external = options.external?.(id)
    return external ? { external } : undefined
  }

  const baseInfo = (base: Base) => ("external" in base ? base.external : entries[base.index])

  /** A resolved entry's content, in memory: it must be small. */
  const smallContent = async (i: number): Promise<Buffer> => {
    const entry = entries[i]
    if (entry?.type === undefined || entry.id === undefined) throw new PackError("a delta's base is not resolved")
    const known = kept.get(entry.id)?.content ?? cache.get(entry.offset)
    if (known) return known
    const { header, data, buffer } = await entryData(entry.offset)
    const plain = TYPES[header.kind]
    const content = plain !== undefined && buffer ? buffer : await rebuild(data, buffer, baseOf(entry.offset, header), entry.size)
    remember(i, content)
    return content
  }

  /** A resolved entry's content by position: small ones in memory, large ones from a scratch file. */
  const accessOf = async (base: Base): Promise<RandomAccess> => {
    if ("external" in base) return base.external.access()
    const entry = entries[base.index]
    if (entry?.type === undefined) throw new PackError("a delta's base is not resolved")
    if (!isLarge(entry.type, entry.size)) return bufferAccess(await smallContent(base.index))
    const known = spilled.get(entry.offset)
    if (known) return known
    const { header, data } = await entryData(entry.offset)
    const file = scratch.create()
    if (TYPES[header.kind] !== undefined) await inflateStreaming(pack, entry.offset + header.dataStart, header.size, file.write)
    else applyDeltaStreaming(data, await accessOf(requireBase(baseOf(entry.offset, header))), file.write)
    const access = file.done()
    spilled.set(entry.offset, access)
    return access
  }

  /** A delta applied to its base, into memory (`size` bytes). */
  const rebuild = async (delta: RandomAccess, deltaBuffer: Buffer | undefined, base: Base | undefined, size: number) => {
    const resolved = requireBase(base)
    if (deltaBuffer && !("external" in resolved) && !isLarge(baseInfo(resolved)?.type ?? "blob", baseInfo(resolved)?.size ?? 0)) {
      return applyDelta(deltaBuffer, await smallContent(resolved.index))
    }
    const out = Buffer.allocUnsafe(size)
    let at = 0
    applyDeltaStreaming(delta, await accessOf(resolved), (piece) => {
      at += piece.copy(out, at)
    })
    return out
  }

  /** Name the delta at entry `i` (its base resolved): type, size and id, its content kept when small. */
  const resolveDelta = async (i: number, delta: RandomAccess, deltaBuffer: Buffer | undefined, base: Base) => {
    const info = baseInfo(base)
    const entry = entries[i]
    if (info?.type === undefined || entry === undefined) throw new PackError("a delta's base is not resolved")
    const { baseSize, resultSize } = deltaSizes(delta.read(0, 32))
    if (baseSize !== info.size) throw new PackError("a delta does not fit its base")
    spend(resultSize)
    entry.type = info.type
    entry.size = resultSize
    if (isLarge(info.type, resultSize)) {
      const hasher = objectIdHasher(info.type, resultSize)
      applyDeltaStreaming(delta, await accessOf(base), hasher.update)
      entry.id = hasher.digest()
    } else {
      if (resultSize > MAX_METADATA_BYTES) throw new CeilingExceeded(`the repository has a ${info.type} over ${mib(MAX_METADATA_BYTES)}`)
      const content = await rebuild(delta, deltaBuffer, base, resultSize)
      entry.id = objectId(info.type, content)
      remember(i, content)
    }
    byId.set(entry.id ?? "", i)
  }

  // REF_DELTAs whose base comes later: only where they are is kept (their data is inflated again then)
  /**
   * The common case without a promise: a delta in memory on a small base already in memory. False when it needs
   * more (a large result, a base spilled, evicted or outside the pack): then resolveDelta does it.
   */
  const resolveInMemory = (i: number, delta: Buffer, base: Base): boolean => {
    if ("external" in base) return false
    const info = entries[base.index]
    const entry = entries[i]
    if (info?.type === undefined || info.id === undefined || entry === undefined || isLarge(info.type, info.size)) return false
    const baseContent = kept.get(info.id)?.content ?? cache.get(info.offset)
    if (baseContent === undefined) return false
    const { baseSize, resultSize } = deltaSizes(delta)
    if (baseSize !== info.size) throw new PackError("a delta does not fit its base")
    if (isLarge(info.type, resultSize) || resultSize > MAX_METADATA_BYTES) return false
    spend(resultSize)
    const content = applyDelta(delta, baseContent)
    entry.type = info.type
    entry.size = resultSize
    entry.id = objectId(info.type, content)
    byId.set(entry.id, i)
    remember(i, content)
    return true
  }

  const deferred: Array<{ readonly i: number; readonly offset: number; readonly baseId: string }> = []
  let pos = 12
  for (let i = 0; i < count; i++) {
    if (pos >= end) throw new PackError("pack ends early")
    const offset = pos
    const header = readEntryHeader(pack.read(offset, 64), 0)
    spend(header.size)
    const type = TYPES[header.kind]
    const entry: Entry = { offset, type, size: header.size, id: undefined, crc: 0 }
    entries.push(entry)
    byOffset.set(offset, i)
    const start = offset + header.dataStart
    if (type !== undefined && isLarge(type, header.size)) {
      const hasher = objectIdHasher(type, header.size)
      pos = start + (await inflateStreaming(pack, start, header.size, hasher.update))
      entry.id = hasher.digest()
    } else if (type !== undefined) {
      if (header.size > MAX_METADATA_BYTES) throw new CeilingExceeded(`the repository has a ${type} over ${mib(MAX_METADATA_BYTES)}`)
      const { content, consumed } = inflateEntry(pack, start, header.size)
      pos = start + consumed
      entry.id = objectId(type, content)
      remember(i, content)
    } else if (header.distance !== undefined || header.baseId !== undefined) {
      const inMemory = header.size <= DELTA_IN_MEMORY ? inflateEntry(pack, start, header.size) : undefined
      const { data, buffer, end: dataEnd } = inMemory
        ? { data: bufferAccess(inMemory.content), buffer: inMemory.content, end: start + inMemory.consumed }
        : await entryData(offset)
      pos = dataEnd
      const base = baseOf(offset, header)
      if (base && buffer && resolveInMemory(i, buffer, base)) {
        // resolved without waiting
      } else if (base && baseInfo(base)?.type !== undefined) {
        await resolveDelta(i, data, buffer, base)
      } else {
        deferred.push({ i, offset, baseId: header.baseId ?? "" })
      }
    } else {
      throw new PackError(`an entry of unknown type ${header.kind}`)
    }
    if (entry.id !== undefined) byId.set(entry.id, i)
    entry.crc = crcOf(pack, offset, pos)
  }
  if (pos !== end) throw new PackError("pack has trailing bytes")

  // REF_DELTAs whose base came later in the pack
  for (let left = deferred; left.length > 0; ) {
    const next: typeof deferred = []
    for (const d of left) {
      const index = byId.get(d.baseId)
      const external = index === undefined ? options.external?.(d.baseId) : undefined
      const base: Base | undefined = index !== undefined ? { index } : external ? { external } : undefined
      if (base && baseInfo(base)?.type !== undefined) {
        const { data, buffer } = await entryData(d.offset)
        await resolveDelta(d.i, data, buffer, base)
      } else {
        next.push(d)
      }
    }
    if (next.length === left.length) throw new MissingBase("a delta's base is neither in the pack nor in the store")
    left = next
  }
  const idxEntries = entries.map((e) => ({ id: e.id ?? "", offset: e.offset, crc: e.crc }))
  return { checksum: trailer.toString("hex"), idx: buildIdx(idxEntries, trailer), objects: kept, contains: (id: string) => byId.has(id) }
}

const requireBase = (base: Base | undefined): Base => {
  if (base === undefined) throw new MissingBase("a delta's base is neither in the pack nor in the store")
  return base
}

const CHUNK = 1024 * 1024

const checksumOf = (pack: RandomAccess, end: number): Buffer => {
  const hash = createHash("sha1")
  for (let at = 0; at < end; at += CHUNK) hash.update(pack.read(at, Math.min(CHUNK, end - at)))
  return hash.digest()
}

const crcOf = (pack: RandomAccess, from: number, to: number): number => {
  let crc = 0
  for (let at = from; at < to; at += CHUNK) crc = crc32(pack.read(at, Math.min(CHUNK, to - at)), crc)
  return crc
}
