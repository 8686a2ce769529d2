import { createHash } from "node:crypto"
import { crc32 } from "node:zlib"
import { inflateEntry, inflateStreaming } from "./Inflate.js"
import { buildIdx } from "./PackIdx.js"
import {
  CeilingExceeded,
  type GitObject,
  MissingBase,
  objectId,
  objectIdHasher,
  type ObjectType,
  PackError,
  readEntryHeader,
  TYPES
} from "./PackFormat.js"
import { type Base, DELTA_IN_MEMORY, type Entry, makeResolver, MAX_METADATA_BYTES, mib, type Resolver } from "./PackResolver.js"
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

/**
 * Indexing is a long run of synchronous work (inflate, hash) chained by promises, which never lets the event
 * loop in: requests waiting meanwhile (a webhook's acknowledgement) would wait for the whole pack. Every few
 * milliseconds of it, the loop gets a turn.
 */
const SLICE_MILLIS = 8

const makeSlicer = () => {
  let since = performance.now()
  return async () => {
    if (performance.now() - since < SLICE_MILLIS) return
    await new Promise<void>((resolve) => setImmediate(resolve))
    since = performance.now()
  }
}

/** The pack's header and trailer checked: its object count (within the ceiling), where its entries end. */
const checkedPack = (pack: RandomAccess, limits: IndexLimits) => {
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
  return { count, end, trailer }
}

/** A REF_DELTA whose base was not known when it was read. */
interface Deferred {
  readonly i: number
  readonly offset: number
  readonly baseId: string
}

/** Resolve the REF_DELTAs whose base came later in the pack (or is in the store), round after round. */
const resolveDeferred = async (resolver: Resolver, deferred: ReadonlyArray<Deferred>, options: IndexOptions, slice: () => Promise<void>) => {
  for (let left = deferred; left.length > 0; ) {
    const next: Array<Deferred> = []
    for (const d of left) {
      await slice()
      const index = resolver.byId.get(d.baseId)
      const external = index === undefined ? options.external?.(d.baseId) : undefined
      const base: Base | undefined = index !== undefined ? { index } : external ? { external } : undefined
      if (base && resolver.baseInfo(base)?.type !== undefined) {
        const { data, buffer } = await resolver.entryData(d.offset)
        await resolver.resolveDelta(d.i, data, buffer, base)
      } else {
        next.push(d)
      }
    }
    if (next.length === left.length) throw new MissingBase("a delta's base is neither in the pack nor in the store")
    left = next
  }
}

const index = async (pack: RandomAccess, limits: IndexLimits, options: IndexOptions, scratch: ReturnType<typeof makeScratch>): Promise<IndexedPack> => {
  const { count, end, trailer } = checkedPack(pack, limits)
  const resolver = makeResolver(pack, limits, options, scratch)
  const { entries, byOffset, byId, kept, spend, remember, baseOf, baseInfo, entryData, resolveInMemory, resolveDelta, isLarge } = resolver
  // REF_DELTAs whose base comes later: only where they are is kept (their data is inflated again then)
  const deferred: Array<Deferred> = []
  const slice = makeSlicer()
  let pos = 12
  for (let i = 0; i < count; i++) {
    await slice()
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

  await resolveDeferred(resolver, deferred, options, slice)
  const idxEntries = entries.map((e) => ({ id: e.id ?? "", offset: e.offset, crc: e.crc }))
  return { checksum: trailer.toString("hex"), idx: buildIdx(idxEntries, trailer), objects: kept, contains: (id: string) => byId.has(id) }
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
