import { createHash } from "node:crypto"
import { constants, deflateRawSync, deflateSync } from "node:zlib"
import { entryHeader } from "../../layers/git/PackWriter.js"

/**
 * Packs built by hand, as a hostile git host would send them: objects whose
 * declared and real sizes the test chooses, a decompression bomb (a blob of a
 * gigabyte that deflates to about a megabyte) without ever holding it.
 */

export type Kind = "commit" | "tree" | "blob"
const KIND_CODE: Record<Kind, number> = { commit: 1, tree: 2, blob: 3 }

/** One pack entry: its type, the size it declares, and its zlib stream. */
export interface Entry {
  readonly kind: Kind
  readonly size: number
  readonly deflated: Buffer
  readonly id: string
}

const idOf = (kind: Kind, content: Buffer) => createHash("sha1").update(`${kind} ${content.length}\0`).update(content).digest("hex")

export const object = (kind: Kind, content: Buffer): Entry => ({ kind, size: content.length, deflated: deflateSync(content), id: idOf(kind, content) })

/**
 * A blob of `size` bytes: `first`, then zeros. Its zlib stream is made of
 * independently deflated, fully flushed 1 MiB pieces (all but the first are the
 * same bytes), so nothing of that size is ever in memory.
 */
export const zeroBlob = (size: number, first: number): Entry => {
  const MiB = 1024 * 1024
  if (size % MiB !== 0 || size < 2 * MiB) throw new Error("size must be a multiple of 1 MiB, at least 2 MiB")
  const head = Buffer.alloc(MiB)
  head[0] = first
  const zeros = Buffer.alloc(MiB)
  const flushed = (chunk: Buffer) => deflateRawSync(chunk, { level: 9, finishFlush: constants.Z_FULL_FLUSH })
  const middle = flushed(zeros)
  const pieces = [Buffer.from([0x78, 0xda]), flushed(head)]
  for (let i = 2; i < size / MiB; i++) pieces.push(middle)
  pieces.push(deflateRawSync(zeros, { level: 9 }))
  // Adler-32 of `first` followed by zeros: a = 1 + first, b = size * (1 + first)
  const adler = Buffer.alloc(4)
  adler.writeUInt16BE((size * (1 + first)) % 65521, 0)
  adler.writeUInt16BE((1 + first) % 65521, 2)
  pieces.push(adler)
  const hash = createHash("sha1").update(`blob ${size}\0`).update(head)
  for (let i = 1; i < size / MiB; i++) hash.update(zeros)
  return { kind: "blob", size, deflated: Buffer.concat(pieces), id: hash.digest("hex") }
}

export const tree = (items: ReadonlyArray<{ readonly mode: string; readonly name: string; readonly id: string }>): Entry =>
  object(
    "tree",
    Buffer.concat(
      [...items].sort((a, b) => (a.name < b.name ? -1 : 1)).map((i) => Buffer.concat([Buffer.from(`${i.mode} ${i.name}\0`), Buffer.from(i.id, "hex")]))
    )
  )

export const commit = (treeId: string, message = "crafted"): Entry =>
  object("commit", Buffer.from(`tree ${treeId}\nauthor A <a@b.c> 1700000000 +0000\ncommitter A <a@b.c> 1700000000 +0000\n\n${message}\n`))

/** A version-2 pack of these entries, with its checksum. */
export const pack = (entries: ReadonlyArray<Entry>): Buffer => {
  const header = Buffer.alloc(12)
  header.write("PACK", 0, "latin1")
  header.writeUInt32BE(2, 4)
  header.writeUInt32BE(entries.length, 8)
  const body = Buffer.concat([header, ...entries.flatMap((e) => [entryHeader(KIND_CODE[e.kind], e.size), e.deflated])])
  return Buffer.concat([body, createHash("sha1").update(body).digest()])
}
