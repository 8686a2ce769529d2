import { readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { buildIdx, idxCount, idxEntries } from "./PackIdx.js"
import { OFS_DELTA, PackError, readEntryHeader, REF_DELTA, TYPES } from "./PackFormat.js"
import { type CopiedObject, writePack } from "./PackWriter.js"

/**
 * Keeps a lab's store to a few packs. Every fetch and every push adds one, so a lab written to all day would gather
 * thousands, and each object lookup searches every pack's index. Packs are merged geometrically, as
 * `git repack --geometric=2` does (`geometricChoice`), so a store holds about log2(its size) packs and each byte is
 * rewritten about log2(its size) times in all. Entries are copied as they are stored, still deflated (an object is
 * never rebuilt, nothing is inflated: thousands of zlib calls per merge held hundreds of MiB until collected); a
 * delta whose base is in another pack stays a delta on that base. Only packs together under MAX_MERGE_BYTES are
 * merged, so memory stays bounded; a large first clone's pack is left as it is.
 */

/** Merge only when this many packs (or more) are on disk. */
export const COMPACT_FROM_PACKS = 8
const MAX_MERGE_BYTES = 64 * 1024 * 1024

interface PackFile {
  readonly base: string
  readonly bytes: number
}

const packsOf = async (gitdir: string): Promise<Array<PackFile>> => {
  const dir = join(gitdir, "objects", "pack")
  let names: Array<string>
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const found = await Promise.all(
    names
      .filter((name) => name.endsWith(".idx"))
      .map(async (name): Promise<Array<PackFile>> => {
        const base = join(dir, name.slice(0, -4))
        return stat(`${base}.pack`).then((s) => [{ base, bytes: s.size }], () => [])
      })
  )
  return found.flat()
}

/**
 * How many of the smallest packs to merge so that the sizes, smallest first, form a progression of factor 2 (each
 * pack at least twice the one before), as `git repack --geometric=2` splits them: from the largest down, the packs
 * already in progression stay; all below the first break are merged, and so are the ones above it that the merged
 * pack would not be half of. Fewer than 2: nothing to merge. Only as many as fit in MAX_MERGE_BYTES are merged.
 */
export const geometricChoice = (sizes: ReadonlyArray<number>): number => {
  const sorted = [...sizes].sort((a, b) => a - b)
  let split = sorted.length - 1
  while (split > 0 && (sorted[split] ?? 0) >= 2 * (sorted[split - 1] ?? 0)) split--
  // the pair that broke the progression: both sides of it are merged
  if (split > 0) split++
  let sum = sorted.slice(0, split).reduce((a, b) => a + b, 0)
  for (let next = sorted[split]; next !== undefined && next < 2 * sum; next = sorted[split]) {
    sum += next
    split++
  }
  let bytes = 0
  let count = 0
  while (count < split && bytes + (sorted[count] ?? 0) <= MAX_MERGE_BYTES) bytes += sorted[count++] ?? 0
  return count
}

/**
 * The entries of one pack file as they are stored (whole, or a delta on a base named by id), their data still
 * deflated: an entry's data runs to the next entry (the last one's, to the trailer), so nothing is inflated.
 */
const objectsOfPack = async (base: string): Promise<Array<CopiedObject>> => {
  const idx = await readFile(`${base}.idx`)
  const count = idxCount(idx)
  if (count === undefined) throw new PackError(`${base}.idx is not a pack index`)
  const pack = await readFile(`${base}.pack`)
  const entries = idxEntries(idx, count).sort((a, b) => a.offset - b.offset)
  const idAt = new Map(entries.map((e) => [e.offset, e.id]))
  return entries.map(({ id, offset }, i): CopiedObject => {
    const header = readEntryHeader(pack, offset)
    const end = entries[i + 1]?.offset ?? pack.length - 20
    if (end <= header.dataStart) throw new PackError(`${base}.pack: the entry of ${id} is cut short`)
    const deflated = pack.subarray(header.dataStart, end)
    const type = TYPES[header.kind]
    if (type !== undefined) return { kind: "copied", id, type, size: header.size, deflated }
    const baseId = header.kind === OFS_DELTA ? idAt.get(offset - (header.distance ?? 0)) : header.kind === REF_DELTA ? header.baseId : undefined
    if (baseId === undefined) throw new PackError(`${base}.pack: the delta ${id} has no base`)
    return { kind: "copied-delta", id, baseId, size: header.size, deflated }
  })
}

/** Bases before the deltas on them (a delta whose base is elsewhere can go anywhere). */
const basesFirst = (objects: ReadonlyArray<CopiedObject>): Array<CopiedObject> => {
  const byId = new Map(objects.map((o) => [o.id, o]))
  const placed = new Set<string>()
  const ordered: Array<CopiedObject> = []
  const place = (object: CopiedObject) => {
    const chain: Array<CopiedObject> = []
    for (let at: CopiedObject | undefined = object; at !== undefined && !placed.has(at.id); ) {
      chain.push(at)
      placed.add(at.id)
      at = at.kind === "copied-delta" ? byId.get(at.baseId) : undefined
    }
    ordered.push(...chain.reverse())
  }
  for (const object of objects) place(object)
  return ordered
}

/**
 * Merge the store's small packs into one when it holds COMPACT_FROM_PACKS or more; true when it did. The new pack is
 * written whole (pack, then index) before the old ones are removed, so a crash leaves duplicates, never a gap.
 * `beforeRemoving` runs once the new pack is in place: the caller closes its readers of the store there. Run it
 * while no other job uses the store.
 */
export const compactPacks = async (gitdir: string, beforeRemoving: () => void): Promise<boolean> => {
  const packs = await packsOf(gitdir)
  if (packs.length < COMPACT_FROM_PACKS) return false
  const count = geometricChoice(packs.map((p) => p.bytes))
  if (count < 2) return false
  const chosen = [...packs].sort((a, b) => a.bytes - b.bytes).slice(0, count)
  const unique = new Map<string, CopiedObject>()
  // an object held twice is kept whole when one copy is: a delta copy could be on a base that is itself a delta on it
  for (const pack of chosen) {
    for (const object of await objectsOfPack(pack.base)) if (unique.get(object.id)?.kind !== "copied") unique.set(object.id, object)
  }
  const written = writePack(basesFirst([...unique.values()]))
  const base = join(gitdir, "objects", "pack", `pack-${written.checksum.toString("hex")}`)
  await writeFile(`${base}.pack.tmp`, written.pack, { mode: 0o600 })
  await rename(`${base}.pack.tmp`, `${base}.pack`)
  await writeFile(`${base}.idx.tmp`, buildIdx(written.entries, written.checksum), { mode: 0o600 })
  await rename(`${base}.idx.tmp`, `${base}.idx`)
  beforeRemoving()
  for (const pack of chosen) {
    if (pack.base === base) continue
    // the index first: a reader never finds an index whose pack is gone
    await rm(`${pack.base}.idx`, { force: true })
    await rm(`${pack.base}.pack`, { force: true })
  }
  return true
}
