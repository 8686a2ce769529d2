import type { GitObject } from "./PackFormat.js"
import type { ObjectReader } from "./PackReader.js"

/** Objects handed to `withPreloaded` are kept only up to this many bytes in all. */
const PRELOADED_BYTES = 256 * 1024 * 1024

/**
 * A reader that first hands out objects already in memory (a fetch's, their
 * ids computed from their content), each once: it is dropped when read. Then
 * it reads the store. Beyond PRELOADED_BYTES nothing is kept.
 */
export const withPreloaded = (reader: ObjectReader, objects: ReadonlyMap<string, GitObject>): ObjectReader => {
  let bytes = 0
  for (const object of objects.values()) bytes += object.content.length
  const preloaded = bytes <= PRELOADED_BYTES ? new Map(objects) : new Map<string, GitObject>()
  const take = (oid: string) => {
    const object = preloaded.get(oid)
    if (object !== undefined) preloaded.delete(oid)
    return object
  }
  return {
    read: (oid) => take(oid) ?? reader.read(oid),
    readBounded: (oid, maxBytes) => {
      const object = take(oid)
      if (object === undefined) return reader.readBounded(oid, maxBytes)
      return { type: object.type, size: object.content.length, content: object.content.length > maxBytes ? undefined : object.content }
    },
    deltaDepth: (oid) => (preloaded.has(oid) ? 0 : reader.deltaDepth(oid)),
    holds: (oid) => preloaded.has(oid) || reader.holds(oid),
    spill: reader.spill,
    close: () => {
      preloaded.clear()
      reader.close()
    }
  }
}
