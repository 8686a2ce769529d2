import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { inflateEntry, inflatePrefix, inflateStreaming } from "./Inflate.js"
import { idxCount, idxFind } from "./PackIdx.js"
import {
  applyDelta,
  applyDeltaStreaming,
  deltaSizes,
  type GitObject,
  objectId,
  type ObjectType,
  PackError,
  readEntryHeader,
  TYPES
} from "./PackFormat.js"
import { looseObject } from "./LooseObject.js"
import { bufferAccess, type FileAccess, fileAccess, type RandomAccess, type Scratch } from "./RandomAccess.js"

export type { GitObject, ObjectType } from "./PackFormat.js"

/**
 * Reads git objects of an on-disk repository straight from its pack files
 * (through their .idx) and loose objects, with node's native zlib and SHA-1.
 *
 * isomorphic-git's own reads cost about a millisecond per object (a JS inflate,
 * a directory listing and fresh file-system wrappers per call, the whole pack
 * loaded and hashed once per cache), which dominated a pull of thousands of
 * files. Every object this reader returns whole has been checked against its id
 * (SHA-1 of `<type> <size>\0<content>`). Objects larger than a caller's bound
 * are described (type and size) without being inflated.
 *
 * Its file calls stay synchronous (readSync on a pack, readFileSync for an .idx
 * or a loose object), for a measured reason: a pull reads thousands of objects,
 * two positioned reads each. 20,000 objects from a page-cached 64 MiB file took
 * 62-337 ms with readSync and 1,100-1,610 ms with fs.promises FileHandle.read
 * (node 20, this service's 2-core host, 2026-11). The stretches of synchronous
 * work are bounded instead: the sync worker's fibers let I/O in on every step
 * (SyncSupervisor's setImmediate scheduler), the indexer slices its own work
 * (PackIndexer SLICE_MILLIS), and what runs once per fetch (compaction, storing
 * the pack, the store's HEAD) is asynchronous.
 */

/** An object's type and size, with its content when it is within the bound asked for. */
export interface ObjectInfo {
  readonly type: ObjectType
  readonly size: number
  readonly content: Buffer | undefined
}

export interface ObjectReader {
  /** The object, checked against `oid`; undefined when the store does not hold it. Throws on a damaged store. */
  readonly read: (oid: string) => GitObject | undefined
  /** Like `read`, but an object over `maxBytes` comes without its content (it is not inflated). */
  readonly readBounded: (oid: string, maxBytes: number) => ObjectInfo | undefined
  /** How many deltas must be applied to read the object (0: stored whole, or not held). */
  readonly deltaDepth: (oid: string) => number
  /** Whether the store holds the object: loose, or in a pack seen by the reader's last read (no new listing). */
  readonly holds: (oid: string) => boolean
  /** A large object's content by position, spilled to a scratch file (never whole in memory). */
  readonly spill: (oid: string, scratch: Scratch) => Promise<RandomAccess | undefined>
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
  file: FileAccess | undefined
}

/** Delta bases kept resolved while a job reads (a chain shares its bases). */
const BASE_CACHE_BYTES = 32 * 1024 * 1024
/** Pack files (and cached bases) are let go once the reader has been idle this long. */
const IDLE_CLOSE_MILLIS = 2_000
const MAX_CHAIN = 4096

/** The reader of one store: its packs' indexes, their open files, resolved delta bases, the idle timer. */
class PackObjectReader implements ObjectReader {
  constructor(private readonly gitdir: string) {}

  private packs: Array<Pack> | undefined
  private readonly bases = new Map<string, GitObject>()
  private baseBytes = 0

  private readonly scan = (): Array<Pack> => {
    const dir = join(this.gitdir, "objects", "pack")
    const known = new Map((this.packs ?? []).map((p) => [p.path, p]))
    let names: Array<string>
    try {
      names = readdirSync(dir)
    } catch {
      names = []
    }
    const found: Array<Pack> = []
    for (const name of names) {
      if (!name.endsWith(".idx")) continue
      const path = join(dir, name.slice(0, -4))
      const existing = known.get(path)
      if (existing) {
        found.push(existing)
        continue
      }
      const idx = readFileSync(`${path}.idx`)
      const count = idxCount(idx)
      if (count !== undefined) found.push({ path, idx, count, file: undefined })
    }
    this.packs = found
    return found
  }

  private readonly accessOf = (pack: Pack): RandomAccess => {
    pack.file ??= fileAccess(`${pack.path}.pack`)
    return pack.file
  }

  private readonly remember = (key: string, object: GitObject) => {
    if (object.content.length > BASE_CACHE_BYTES / 4) return
    this.bases.set(key, object)
    this.baseBytes += object.content.length
    for (const [k, v] of this.bases) {
      if (this.baseBytes <= BASE_CACHE_BYTES) break
      this.bases.delete(k)
      this.baseBytes -= v.content.length
    }
  }

  private readonly headerAt = (pack: Pack, offset: number) => {
    const header = readEntryHeader(this.accessOf(pack).read(offset, 64), 0)
    return { ...header, dataStart: offset + header.dataStart }
  }

  /** Where a delta's base is: an earlier offset of the same pack, or an object found by id. */
  private readonly baseOf = (pack: Pack, offset: number, header: ReturnType<typeof this.headerAt>) => {
    if (header.distance !== undefined) {
      const baseOffset = offset - header.distance
      if (baseOffset < 12 || baseOffset >= offset) throw new PackError("a delta's base offset is out of range")
      return { pack, offset: baseOffset }
    }
    const at = header.baseId === undefined ? undefined : this.locate(header.baseId)
    if (at === undefined) throw new PackError("a delta's base is missing")
    return at
  }

  /** Type and size of the object at `offset`, without inflating it (a delta: its header, and its base's type). */
  private readonly infoAt = (pack: Pack, offset: number, depth: number): { readonly type: ObjectType; readonly size: number } => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = this.headerAt(pack, offset)
    const plain = TYPES[header.kind]
    if (plain !== undefined) return { type: plain, size: header.size }
    const base = this.baseOf(pack, offset, header)
    const size = deltaSizes(inflatePrefix(this.accessOf(pack), header.dataStart, Math.min(32, header.size))).resultSize
    return { type: "pack" in base ? this.infoAt(base.pack, base.offset, depth + 1).type : base.loose.type, size }
  }

  private readonly depthAt = (pack: Pack, offset: number, depth: number): number => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = this.headerAt(pack, offset)
    if (TYPES[header.kind] !== undefined) return depth
    const base = this.baseOf(pack, offset, header)
    return "pack" in base ? this.depthAt(base.pack, base.offset, depth + 1) : depth + 1
  }

  /** The object stored at `offset` of `pack` (deltas resolved), not yet checked against an id. */
  private readonly readAt = (pack: Pack, offset: number, depth: number): GitObject => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = this.headerAt(pack, offset)
    const plain = TYPES[header.kind]
    if (plain !== undefined) return { type: plain, content: inflateEntry(this.accessOf(pack), header.dataStart, header.size).content }
    const at = this.baseOf(pack, offset, header)
    let base: GitObject
    if ("pack" in at) {
      const key = `${at.pack.path}:${at.offset}`
      const cached = this.bases.get(key)
      base = cached ?? this.readAt(at.pack, at.offset, depth + 1)
      if (cached === undefined) this.remember(key, base)
    } else {
      base = at.loose
    }
    return { type: base.type, content: applyDelta(inflateEntry(this.accessOf(pack), header.dataStart, header.size).content, base.content) }
  }

  /** The object at `offset`, written to a scratch file piece by piece (bases too, when large). */
  private readonly spillAt = async (pack: Pack, offset: number, scratch: Scratch, depth: number): Promise<RandomAccess> => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = this.headerAt(pack, offset)
    const file = scratch.create()
    if (TYPES[header.kind] !== undefined) {
      await inflateStreaming(this.accessOf(pack), header.dataStart, header.size, file.write)
      return file.done()
    }
    const delta = scratch.create()
    await inflateStreaming(this.accessOf(pack), header.dataStart, header.size, delta.write)
    const at = this.baseOf(pack, offset, header)
    const base = "pack" in at ? await this.spillAt(at.pack, at.offset, scratch, depth + 1) : bufferAccess(at.loose.content)
    applyDeltaStreaming(delta.done(), base, file.write)
    return file.done()
  }

  private readonly readLoose = (oid: string, maxBytes: number): ObjectInfo | undefined => {
    let raw: Buffer
    try {
      raw = readFileSync(join(this.gitdir, "objects", oid.slice(0, 2), oid.slice(2)))
    } catch {
      return undefined
    }
    return looseObject(raw, oid, maxBytes)
  }


  private readonly locatePacked = (oid: string): { readonly pack: Pack; readonly offset: number } | undefined => {
    const key = Buffer.from(oid, "hex")
    const inPacks = (list: ReadonlyArray<Pack>) => {
      for (const pack of list) {
        const offset = idxFind(pack.idx, pack.count, key)
        if (offset !== undefined) return { pack, offset }
      }
      return undefined
    }
    // a pack written since the last scan is found by scanning again
    return inPacks(this.packs ?? this.scan()) ?? inPacks(this.scan())
  }

  private readonly locate = (oid: string): Location | undefined => {
    const packed = this.locatePacked(oid)
    if (packed) return packed
    const loose = this.readLoose(oid, Number.MAX_SAFE_INTEGER)
    return loose?.content ? { loose: { type: loose.type, content: loose.content } } : undefined
  }

  private lastUse = 0
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private readonly touch = () => {
    this.lastUse = Date.now()
    if (this.idleTimer === undefined) this.armIdleTimer(IDLE_CLOSE_MILLIS)
  }
  private readonly closeWhenIdle = () => {
    this.idleTimer = undefined
    const idle = Date.now() - this.lastUse
    if (idle >= IDLE_CLOSE_MILLIS) this.close()
    else this.armIdleTimer(IDLE_CLOSE_MILLIS - idle)
  }
  private readonly armIdleTimer = (millis: number) => {
    this.idleTimer = setTimeout(this.closeWhenIdle, millis)
    this.idleTimer.unref()
  }

  readonly readBounded = (oid: string, maxBytes: number): ObjectInfo | undefined => {
    this.touch()
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined
    const at = this.locatePacked(oid)
    if (at === undefined) return this.readLoose(oid, maxBytes)
    const header = this.headerAt(at.pack, at.offset)
    // a plain entry says its size; a delta says its result's size in its first bytes
    const size = TYPES[header.kind] !== undefined ? header.size : deltaSizes(inflatePrefix(this.accessOf(at.pack), header.dataStart, Math.min(32, header.size))).resultSize
    if (size > maxBytes) return { ...this.infoAt(at.pack, at.offset, 0), content: undefined }
    const object = this.readAt(at.pack, at.offset, 0)
    if (objectId(object.type, object.content) !== oid) throw new PackError(`object ${oid} does not match its id`)
    return { type: object.type, size: object.content.length, content: object.content }
  }

  readonly read = (oid: string): GitObject | undefined => {
    const info = this.readBounded(oid, Number.MAX_SAFE_INTEGER)
    return info?.content ? { type: info.type, content: info.content } : undefined
  }

  readonly deltaDepth = (oid: string): number => {
    this.touch()
    const at = /^[0-9a-f]{40}$/.test(oid) ? this.locatePacked(oid) : undefined
    return at === undefined ? 0 : this.depthAt(at.pack, at.offset, 0)
  }

  readonly holds = (oid: string): boolean => {
    this.touch()
    if (!/^[0-9a-f]{40}$/.test(oid)) return false
    const key = Buffer.from(oid, "hex")
    for (const pack of this.packs ?? this.scan()) if (idxFind(pack.idx, pack.count, key) !== undefined) return true
    return existsSync(join(this.gitdir, "objects", oid.slice(0, 2), oid.slice(2)))
  }

  readonly spill = async (oid: string, scratch: Scratch): Promise<RandomAccess | undefined> => {
    this.touch()
    const at = /^[0-9a-f]{40}$/.test(oid) ? this.locate(oid) : undefined
    if (at === undefined) return undefined
    return "pack" in at ? this.spillAt(at.pack, at.offset, scratch, 0) : bufferAccess(at.loose.content)
  }

  readonly close = () => {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
    for (const pack of this.packs ?? []) {
      pack.file?.close()
      pack.file = undefined
    }
    this.packs = undefined
    this.bases.clear()
    this.baseBytes = 0
  }

}

type Location = { readonly pack: Pack; readonly offset: number } | { readonly loose: GitObject }

export const openObjectReader = (gitdir: string): ObjectReader => new PackObjectReader(gitdir)
