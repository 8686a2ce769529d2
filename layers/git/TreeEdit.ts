import { objectId } from "./PackFormat.js"

/**
 * Git trees edited in place, one path at a time: a tree's bytes are kept and
 * spliced (the entry that changes is cut out or put in at its sorted place),
 * so a commit costs the directories on its path, not the whole tree, and a
 * directory of thousands of entries is not rebuilt entry by entry.
 */

/** The tree with no entries. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

export type EntryMode = "100644" | "100755" | "120000" | "160000" | "40000"

interface Slot {
  /** Sort key: the name's bytes, with "/" after a directory's (git's order). */
  readonly key: Buffer
  readonly name: string
  readonly mode: string
  readonly oid: string
  start: number
  end: number
}

/** One tree's bytes and where each entry sits in them. */
export class TreeBytes {
  private constructor(
    private content: Buffer,
    private readonly slots: Array<Slot>
  ) {}

  static parse(content: Buffer): TreeBytes {
    const slots: Array<Slot> = []
    let pos = 0
    while (pos < content.length) {
      const space = content.indexOf(0x20, pos)
      const nul = space === -1 ? -1 : content.indexOf(0, space + 1)
      if (nul === -1 || nul + 21 > content.length) throw new Error("a tree object is damaged")
      const mode = content.toString("latin1", pos, space)
      const nameBytes = content.subarray(space + 1, nul)
      slots.push({ key: keyOf(nameBytes, mode), name: nameBytes.toString("utf8"), mode, oid: content.toString("hex", nul + 1, nul + 21), start: pos, end: nul + 21 })
      pos = nul + 21
    }
    return new TreeBytes(content, slots)
  }

  static empty(): TreeBytes {
    return new TreeBytes(Buffer.alloc(0), [])
  }

  get bytes(): Buffer {
    return this.content
  }

  get size(): number {
    return this.slots.length
  }

  get(name: string): { readonly mode: string; readonly oid: string } | undefined {
    const found = this.find(name)
    return found.slot
  }

  /** Put `name` (a blob or a tree) with `mode` and `oid`, replacing what was there. */
  set(name: string, mode: EntryMode, oid: string): void {
    this.delete(name)
    const nameBytes = Buffer.from(name, "utf8")
    const bytes = Buffer.concat([Buffer.from(`${mode} `, "latin1"), nameBytes, ZERO, Buffer.from(oid, "hex")])
    const key = keyOf(nameBytes, mode)
    const at = this.indexFor(key)
    const insertAt = this.slots[at]?.start ?? this.content.length
    this.content = Buffer.concat([this.content.subarray(0, insertAt), bytes, this.content.subarray(insertAt)])
    this.shift(at, bytes.length)
    this.slots.splice(at, 0, { key, name, mode, oid, start: insertAt, end: insertAt + bytes.length })
  }

  /** Take `name` out; false when it was not there. */
  delete(name: string): boolean {
    const { index, slot } = this.find(name)
    if (slot === undefined) return false
    this.content = Buffer.concat([this.content.subarray(0, slot.start), this.content.subarray(slot.end)])
    this.slots.splice(index, 1)
    this.shift(index, slot.start - slot.end)
    return true
  }

  /** Move the entries from `index` on by `by` bytes. */
  private shift(index: number, by: number): void {
    for (let i = index; i < this.slots.length; i++) {
      const s = this.slots[i]
      if (s === undefined) continue
      s.start += by
      s.end += by
    }
  }

  /** The entry named `name`, as a blob or a tree (a name is one or the other), and its index. */
  private find(name: string): { readonly index: number; readonly slot: Slot | undefined } {
    const nameBytes = Buffer.from(name, "utf8")
    for (const mode of ["100644", "40000"]) {
      const index = this.indexFor(keyOf(nameBytes, mode))
      const slot = this.slots[index]
      if (slot !== undefined && slot.name === name) return { index, slot }
    }
    return { index: -1, slot: undefined }
  }

  /** Where an entry with this key goes (binary search in git's order). */
  private indexFor(key: Buffer): number {
    let lo = 0
    let hi = this.slots.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const slot = this.slots[mid]
      if (slot !== undefined && Buffer.compare(slot.key, key) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

const SLASH = Buffer.from("/")
const ZERO = Buffer.from([0])
const keyOf = (nameBytes: Buffer, mode: string) => (mode === "40000" || mode === "040000" ? Buffer.concat([nameBytes, SLASH]) : nameBytes)

export const treeId = (tree: TreeBytes): string => objectId("tree", tree.bytes)
