import fs from "node:fs"
import { join } from "node:path"
import { deflateSync } from "node:zlib"
import type { PromiseFsClient } from "isomorphic-git"
import type { ObjectReader } from "./PackReader.js"

/** isomorphic-git is handed objects up to this size (trees, commits, small blobs); larger ones are not found. */
const MAX_HANDED_BYTES = 64 * 1024 * 1024

/**
 * node's fs as isomorphic-git sees a lab's store: the packs are hidden and
 * their objects look like loose ones, read through the service's own reader.
 * isomorphic-git reads a pack by loading the whole file into memory; this way
 * it never does (a pack may be gigabytes), and a large blob never reaches it.
 */
export const storeFs = (gitdir: string, reader: () => ObjectReader): PromiseFsClient => {
  const objects = join(gitdir, "objects")
  const packs = join(objects, "pack")
  const looseId = (path: string): string | undefined => {
    if (!path.startsWith(`${objects}/`)) return undefined
    const match = /^([0-9a-f]{2})\/([0-9a-f]{38})$/.exec(path.slice(objects.length + 1))
    return match ? `${match[1]}${match[2]}` : undefined
  }
  /** The object in git's loose format (deflated `<type> <size>\0<content>`; stored, not compressed: it is read at once). */
  const looseBytes = (oid: string): Buffer | undefined => {
    const info = reader().readBounded(oid, MAX_HANDED_BYTES)
    if (info?.content === undefined) return undefined
    return deflateSync(Buffer.concat([Buffer.from(`${info.type} ${info.size}\0`, "latin1"), info.content]), { level: 0 })
  }
  const p = fs.promises
  const promises = {
    readFile: async (path: string, options?: { readonly encoding?: BufferEncoding } | BufferEncoding) => {
      try {
        return await p.readFile(path, options)
      } catch (cause) {
        const oid = looseId(path)
        const bytes = oid === undefined ? undefined : looseBytes(oid)
        if (bytes === undefined) throw cause
        return bytes
      }
    },
    readdir: (path: string) => (path === packs ? Promise.resolve([]) : p.readdir(path)),
    writeFile: p.writeFile,
    mkdir: p.mkdir,
    rmdir: p.rmdir,
    rm: p.rm,
    unlink: p.unlink,
    stat: p.stat,
    lstat: p.lstat,
    readlink: p.readlink,
    symlink: p.symlink,
    chmod: p.chmod
  }
  return { promises }
}
