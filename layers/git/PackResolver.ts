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

/** The entries of a pack being indexed, resolved one by one (deltas on their bases), within the limits. */
export class Resolver {
  constructor(
    private readonly pack: RandomAccess,
    private readonly limits: IndexLimits,
    private readonly options: IndexOptions,
    private readonly scratch: ReturnType<typeof makeScratch>
  ) {}

  private inflated = 0
  readonly spend = (bytes: number) => {
    this.inflated += bytes
    if (this.inflated > this.limits.maxInflatedBytes) {
      throw new CeilingExceeded(
        `the repository inflates to more than ${mib(this.limits.maxInflatedBytes)}, the ceiling (GIT_MAX_INFLATED_BYTES)`
      )
    }
  }
  readonly entries: Array<Entry> = []
  readonly byOffset = new Map<number, number>()
  readonly byId = new Map<string, number>()
  readonly kept = new Map<string, GitObject>()
  private keptBytes = 0
  private readonly cache = new Map<number, Buffer>()
  private cacheBytes = 0
  private readonly spilled = new Map<number, RandomAccess>()

  readonly remember = (i: number, content: Buffer) => {
    const entry = this.entries[i]
    if (entry?.type === undefined || entry.id === undefined) return
    if (this.keptBytes + content.length <= this.limits.keepBytes) {
      this.kept.set(entry.id, { type: entry.type, content })
      this.keptBytes += content.length
      return
    }
    this.cache.set(entry.offset, content)
    this.cacheBytes += content.length
    for (const [offset, old] of this.cache) {
      if (this.cacheBytes <= BASE_CACHE_BYTES) break
      this.cache.delete(offset)
      this.cacheBytes -= old.length
    }
  }

  readonly isLarge = (type: ObjectType, size: number) => type === "blob" && size > LARGE_BLOB

  /** The data of the entry at `offset` (a delta, or a plain object), in memory or spilled, and where it ends. */
  readonly entryData = async (offset: number) => {
    const header = readEntryHeader(this.pack.read(offset, 64), 0)
    const start = offset + header.dataStart
    if (header.size <= DELTA_IN_MEMORY) {
      const { content, consumed } = inflateEntry(this.pack, start, header.size)
      return { header, data: bufferAccess(content), buffer: content, end: start + consumed }
    }
    const file = this.scratch.create()
    const consumed = await inflateStreaming(this.pack, start, header.size, file.write)
    return { header, data: file.done(), buffer: undefined, end: start + consumed }
  }

  readonly baseOf = (offset: number, header: ReturnType<typeof readEntryHeader>): Base | undefined => {
    if (header.distance !== undefined) {
      const index = this.byOffset.get(offset - header.distance)
      if (index === undefined) throw new PackError("a delta's base offset names no entry")
      return { index }
    }
    const id = header.baseId ?? ""
    const index = this.byId.get(id)
    if (index !== undefined) return { index }
    const external = this.options.external?.(id)
    return external ? { external } : undefined
  }

  readonly baseInfo = (base: Base) => ("external" in base ? base.external : this.entries[base.index])

  /** A resolved entry's content, in memory: it must be small. */
  private readonly smallContent = async (i: number): Promise<Buffer> => {
    const entry = this.entries[i]
    if (entry?.type === undefined || entry.id === undefined) throw new PackError("a delta's base is not resolved")
    const known = this.kept.get(entry.id)?.content ?? this.cache.get(entry.offset)
    if (known) return known
    const { header, data, buffer } = await this.entryData(entry.offset)
    const plain = TYPES[header.kind]
    const content = plain !== undefined && buffer ? buffer : await this.rebuild(data, buffer, this.baseOf(entry.offset, header), entry.size)
    this.remember(i, content)
    return content
  }

  /** A resolved entry's content by position: small ones in memory, large ones from a scratch file. */
  private readonly accessOf = async (base: Base): Promise<RandomAccess> => {
    if ("external" in base) return base.external.access()
    const entry = this.entries[base.index]
    if (entry?.type === undefined) throw new PackError("a delta's base is not resolved")
    if (!this.isLarge(entry.type, entry.size)) return bufferAccess(await this.smallContent(base.index))
    const known = this.spilled.get(entry.offset)
    if (known) return known
    const { header, data } = await this.entryData(entry.offset)
    const file = this.scratch.create()
    if (TYPES[header.kind] !== undefined) await inflateStreaming(this.pack, entry.offset + header.dataStart, header.size, file.write)
    else applyDeltaStreaming(data, await this.accessOf(requireBase(this.baseOf(entry.offset, header))), file.write)
    const access = file.done()
    this.spilled.set(entry.offset, access)
    return access
  }

  /** A delta applied to its base, into memory (`size` bytes). */
  private readonly rebuild = async (delta: RandomAccess, deltaBuffer: Buffer | undefined, base: Base | undefined, size: number) => {
    const resolved = requireBase(base)
    if (deltaBuffer && !("external" in resolved) && !this.isLarge(this.baseInfo(resolved)?.type ?? "blob", this.baseInfo(resolved)?.size ?? 0)) {
      return applyDelta(deltaBuffer, await this.smallContent(resolved.index))
    }
    const out = Buffer.allocUnsafe(size)
    let at = 0
    applyDeltaStreaming(delta, await this.accessOf(resolved), (piece) => {
      at += piece.copy(out, at)
    })
    return out
  }

  /** Name the delta at entry `i` (its base resolved): type, size and id, its content kept when small. */
  readonly resolveDelta = async (i: number, delta: RandomAccess, deltaBuffer: Buffer | undefined, base: Base) => {
    const info = this.baseInfo(base)
    const entry = this.entries[i]
    if (info?.type === undefined || entry === undefined) throw new PackError("a delta's base is not resolved")
    const { baseSize, resultSize } = deltaSizes(delta.read(0, 32))
    if (baseSize !== info.size) throw new PackError("a delta does not fit its base")
    this.spend(resultSize)
    entry.type = info.type
    entry.size = resultSize
    if (this.isLarge(info.type, resultSize)) {
      const hasher = objectIdHasher(info.type, resultSize)
      applyDeltaStreaming(delta, await this.accessOf(base), hasher.update)
      entry.id = hasher.digest()
    } else {
      if (resultSize > MAX_METADATA_BYTES) throw new CeilingExceeded(`the repository has a ${info.type} over ${mib(MAX_METADATA_BYTES)}`)
      const content = await this.rebuild(delta, deltaBuffer, base, resultSize)
      entry.id = objectId(info.type, content)
      this.remember(i, content)
    }
    this.byId.set(entry.id ?? "", i)
  }

  /**
   * The common case without a promise: a delta in memory on a small base already in memory. False when it needs
   * more (a large result, a base spilled, evicted or outside the pack): then resolveDelta does it.
   */
  readonly resolveInMemory = (i: number, delta: Buffer, base: Base): boolean => {
    if ("external" in base) return false
    const info = this.entries[base.index]
    const entry = this.entries[i]
    if (info?.type === undefined || info.id === undefined || entry === undefined || this.isLarge(info.type, info.size)) return false
    const baseContent = this.kept.get(info.id)?.content ?? this.cache.get(info.offset)
    if (baseContent === undefined) return false
    const { baseSize, resultSize } = deltaSizes(delta)
    if (baseSize !== info.size) throw new PackError("a delta does not fit its base")
    if (this.isLarge(info.type, resultSize) || resultSize > MAX_METADATA_BYTES) return false
    this.spend(resultSize)
    const content = applyDelta(delta, baseContent)
    entry.type = info.type
    entry.size = resultSize
    entry.id = objectId(info.type, content)
    this.byId.set(entry.id, i)
    this.remember(i, content)
    return true
  }

}

export const makeResolver = (pack: RandomAccess, limits: IndexLimits, options: IndexOptions, scratch: ReturnType<typeof makeScratch>) => new Resolver(pack, limits, options, scratch)
