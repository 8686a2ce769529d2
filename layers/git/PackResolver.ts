import { MAX_FILE_BYTES } from "../../src/sync/Rules.js"
import { inflateEntry, inflateStreaming } from "./Inflate.js"
import type { ExternalBase, IndexLimits, IndexOptions } from "./PackIndexer.js"
import {
  applyDelta,
  applyDeltaStreaming,
  CeilingExceeded,
  deltaSizes,
  type GitObject,
  MissingBase,
  objectId,
  objectIdHasher,
  type ObjectType,
  PackError,
  readEntryHeader,
  TYPES
} from "./PackFormat.js"
import { bufferAccess, type makeScratch, type RandomAccess } from "./RandomAccess.js"

/**
 * The objects of a pack being indexed (PackIndexer.ts), resolved as the pass
 * reaches them: each entry's type, size and id; small contents kept (to hand on,
 * and as delta bases, within budgets) or read again from the pack; large blobs
 * spilled to scratch files only when a delta builds on them. Every byte it
 * inflates or rebuilds is counted against the inflated-bytes ceiling first.
 */

/** Blobs above this are never held whole in memory. */
const LARGE_BLOB = MAX_FILE_BYTES
/** Trees, commits and tags above this make the pack unusable (a tree this big lists about a million files). */
export const MAX_METADATA_BYTES = 64 * 1024 * 1024
/** Deltas above this are inflated to a scratch file rather than into memory. */
export const DELTA_IN_MEMORY = 8 * 1024 * 1024
/** Resolved small objects kept as delta bases beyond the ones handed on. */
const BASE_CACHE_BYTES = 32 * 1024 * 1024

export type Base = { readonly index: number } | { readonly external: ExternalBase }

export interface Entry {
  readonly offset: number
  type: ObjectType | undefined
  size: number
  id: string | undefined
  crc: number
}

export const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`

const requireBase = (base: Base | undefined): Base => {
  if (base === undefined) throw new MissingBase("a delta's base is neither in the pack nor in the store")
  return base
}

export const makeResolver = (pack: RandomAccess, limits: IndexLimits, options: IndexOptions, scratch: ReturnType<typeof makeScratch>) => {
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

  return { entries, byOffset, byId, kept, spend, remember, baseOf, baseInfo, entryData, resolveInMemory, resolveDelta, isLarge }
}
