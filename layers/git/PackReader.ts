import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { inflateSync } from "node:zlib"
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

const LOOSE_TYPES: Readonly<Record<string, ObjectType>> = { commit: "commit", tree: "tree", blob: "blob", tag: "tag" }
/** Delta bases kept resolved while a job reads (a chain shares its bases). */
const BASE_CACHE_BYTES = 32 * 1024 * 1024
/** Pack files (and cached bases) are let go once the reader has been idle this long. */
const IDLE_CLOSE_MILLIS = 2_000
const MAX_CHAIN = 4096

/** A loose object's file (deflated `<type> <size>\0<content>`) read: its content only when within `maxBytes`. */
export const looseObject = (raw: Buffer, oid: string, maxBytes: number): ObjectInfo => {
  const head = inflatePrefix(bufferAccess(raw), 0, 64)
  const nul = head.indexOf(0)
  const match = /^(commit|tree|blob|tag) (\d+)$/.exec(head.subarray(0, Math.max(0, nul)).toString("latin1"))
  const type = LOOSE_TYPES[match?.[1] ?? ""]
  if (nul === -1 || !match?.[2] || type === undefined) throw new PackError(`loose object ${oid} has no valid header`)
  const size = Number(match[2])
  if (size > maxBytes) return { type, size, content: undefined }
  const content = inflateSync(raw, { maxOutputLength: nul + 1 + size }).subarray(nul + 1)
  if (content.length !== size) throw new PackError(`loose object ${oid} is damaged`)
  return { type, size, content }
}

export const openObjectReader = (gitdir: string): ObjectReader => {
  let packs: Array<Pack> | undefined
  const bases = new Map<string, GitObject>()
  let baseBytes = 0

  const scan = (): Array<Pack> => {
    const dir = join(gitdir, "objects", "pack")
    const known = new Map((packs ?? []).map((p) => [p.path, p]))
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
    packs = found
    return found
  }

  const accessOf = (pack: Pack): RandomAccess => {
    pack.file ??= fileAccess(`${pack.path}.pack`)
    return pack.file
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

  const headerAt = (pack: Pack, offset: number) => {
    const header = readEntryHeader(accessOf(pack).read(offset, 64), 0)
    return { ...header, dataStart: offset + header.dataStart }
  }

  /** Where a delta's base is: an earlier offset of the same pack, or an object found by id. */
  const baseOf = (pack: Pack, offset: number, header: ReturnType<typeof headerAt>) => {
    if (header.distance !== undefined) {
      const baseOffset = offset - header.distance
      if (baseOffset < 12 || baseOffset >= offset) throw new PackError("a delta's base offset is out of range")
      return { pack, offset: baseOffset }
    }
    const at = header.baseId === undefined ? undefined : locate(header.baseId)
    if (at === undefined) throw new PackError("a delta's base is missing")
    return at
  }

  /** Type and size of the object at `offset`, without inflating it (a delta: its header, and its base's type). */
  const infoAt = (pack: Pack, offset: number, depth: number): { readonly type: ObjectType; readonly size: number } => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = headerAt(pack, offset)
    const plain = TYPES[header.kind]
    if (plain !== undefined) return { type: plain, size: header.size }
    const base = baseOf(pack, offset, header)
    const size = deltaSizes(inflatePrefix(accessOf(pack), header.dataStart, Math.min(32, header.size))).resultSize
    return { type: "pack" in base ? infoAt(base.pack, base.offset, depth + 1).type : base.loose.type, size }
  }

  const depthAt = (pack: Pack, offset: number, depth: number): number => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = headerAt(pack, offset)
    if (TYPES[header.kind] !== undefined) return depth
    const base = baseOf(pack, offset, header)
    return "pack" in base ? depthAt(base.pack, base.offset, depth + 1) : depth + 1
  }

  /** The object stored at `offset` of `pack` (deltas resolved), not yet checked against an id. */
  const readAt = (pack: Pack, offset: number, depth: number): GitObject => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = headerAt(pack, offset)
    const plain = TYPES[header.kind]
    if (plain !== undefined) return { type: plain, content: inflateEntry(accessOf(pack), header.dataStart, header.size).content }
    const at = baseOf(pack, offset, header)
    let base: GitObject
    if ("pack" in at) {
      const key = `${at.pack.path}:${at.offset}`
      const cached = bases.get(key)
      base = cached ?? readAt(at.pack, at.offset, depth + 1)
      if (cached === undefined) remember(key, base)
    } else {
      base = at.loose
    }
    return { type: base.type, content: applyDelta(inflateEntry(accessOf(pack), header.dataStart, header.size).content, base.content) }
  }

  /** The object at `offset`, written to a scratch file piece by piece (bases too, when large). */
  const spillAt = async (pack: Pack, offset: number, scratch: Scratch, depth: number): Promise<RandomAccess> => {
    if (depth > MAX_CHAIN) throw new PackError("delta chain too deep")
    const header = headerAt(pack, offset)
    const file = scratch.create()
    if (TYPES[header.kind] !== undefined) {
      await inflateStreaming(accessOf(pack), header.dataStart, header.size, file.write)
      return file.done()
    }
    const delta = scratch.create()
    await inflateStreaming(accessOf(pack), header.dataStart, header.size, delta.write)
    const at = baseOf(pack, offset, header)
    const base = "pack" in at ? await spillAt(at.pack, at.offset, scratch, depth + 1) : bufferAccess(at.loose.content)
    applyDeltaStreaming(delta.done(), base, file.write)
    return file.done()
  }

  const readLoose = (oid: string, maxBytes: number): ObjectInfo | undefined => {
    let raw: Buffer
    try {
      raw = readFileSync(join(gitdir, "objects", oid.slice(0, 2), oid.slice(2)))
    } catch {
      return undefined
    }
    return looseObject(raw, oid, maxBytes)
  }

  type Location = { readonly pack: Pack; readonly offset: number } | { readonly loose: GitObject }

  const locatePacked = (oid: string): { readonly pack: Pack; readonly offset: number } | undefined => {
    const key = Buffer.from(oid, "hex")
    const inPacks = (list: ReadonlyArray<Pack>) => {
      for (const pack of list) {
        const offset = idxFind(pack.idx, pack.count, key)
        if (offset !== undefined) return { pack, offset }
      }
      return undefined
    }
    // a pack written since the last scan is found by scanning again
    return inPacks(packs ?? scan()) ?? inPacks(scan())
  }

  const locate = (oid: string): Location | undefined => {
    const packed = locatePacked(oid)
    if (packed) return packed
    const loose = readLoose(oid, Number.MAX_SAFE_INTEGER)
    return loose?.content ? { loose: { type: loose.type, content: loose.content } } : undefined
  }

  let lastUse = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  const touch = () => {
    lastUse = Date.now()
    if (idleTimer === undefined) armIdleTimer(IDLE_CLOSE_MILLIS)
  }
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

  const readBounded = (oid: string, maxBytes: number): ObjectInfo | undefined => {
    touch()
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined
    const at = locatePacked(oid)
    if (at === undefined) return readLoose(oid, maxBytes)
    const header = headerAt(at.pack, at.offset)
    // a plain entry says its size; a delta says its result's size in its first bytes
    const size = TYPES[header.kind] !== undefined ? header.size : deltaSizes(inflatePrefix(accessOf(at.pack), header.dataStart, Math.min(32, header.size))).resultSize
    if (size > maxBytes) return { ...infoAt(at.pack, at.offset, 0), content: undefined }
    const object = readAt(at.pack, at.offset, 0)
    if (objectId(object.type, object.content) !== oid) throw new PackError(`object ${oid} does not match its id`)
    return { type: object.type, size: object.content.length, content: object.content }
  }

  const read = (oid: string): GitObject | undefined => {
    const info = readBounded(oid, Number.MAX_SAFE_INTEGER)
    return info?.content ? { type: info.type, content: info.content } : undefined
  }

  const deltaDepth = (oid: string): number => {
    touch()
    const at = /^[0-9a-f]{40}$/.test(oid) ? locatePacked(oid) : undefined
    return at === undefined ? 0 : depthAt(at.pack, at.offset, 0)
  }

  const spill = async (oid: string, scratch: Scratch): Promise<RandomAccess | undefined> => {
    touch()
    const at = /^[0-9a-f]{40}$/.test(oid) ? locate(oid) : undefined
    if (at === undefined) return undefined
    return "pack" in at ? spillAt(at.pack, at.offset, scratch, 0) : bufferAccess(at.loose.content)
  }

  const close = () => {
    if (idleTimer !== undefined) clearTimeout(idleTimer)
    idleTimer = undefined
    for (const pack of packs ?? []) {
      pack.file?.close()
      pack.file = undefined
    }
    packs = undefined
    bases.clear()
    baseBytes = 0
  }

  return { read, readBounded, deltaDepth, spill, close }
}
