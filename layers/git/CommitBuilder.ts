import type { Head } from "../../src/sync/Git.js"
import { prefixSuffixDelta } from "./DeltaEncode.js"
import { objectId } from "./PackFormat.js"
import type { PackObject } from "./PackWriter.js"
import { EMPTY_TREE, TreeBytes, treeId } from "./TreeEdit.js"

/**
 * Builds the service's commits natively: one commit per change, each on the
 * one before, with only the directories on the changed path rewritten (the
 * rest of the tree is shared, as git shares it). A directory's new version is a
 * delta on its previous one (they differ by one entry), so a run of commits to
 * one big directory costs little to store and to push.
 */
export interface Change {
  /** Repository path, without a leading slash. */
  readonly path: string
  /** New content, or null to delete. */
  readonly content: Buffer | null
  readonly message: string
  readonly authorName: string
  readonly authorEmail: string
  /** The author when absent. */
  readonly committerName?: string | undefined
  readonly committerEmail?: string | undefined
  /** Unix seconds. */
  readonly time: number
}

export interface Built {
  /** The head after each change (the one before, when a change leaves the tree as it was). */
  readonly heads: ReadonlyArray<Head | undefined>
  /** Every object made, bases before their deltas. */
  readonly objects: ReadonlyArray<PackObject>
}

interface Dir {
  tree: TreeBytes
  /** The id of the version last written (or read), a base for the next version's delta. */
  oid: string | undefined
  /** How many deltas reading that version takes. */
  depth: number
}

/**
 * Deltas on deltas, at most (git's own pack.depth default): each commit's directory a delta on the one before
 * would make reading the newest version of a busy directory apply thousands of deltas.
 */
export const MAX_DELTA_DEPTH = 50

/** A tree of the parent's, and how many deltas reading it takes. */
export interface StoredTree {
  readonly content: Buffer
  readonly depth: number
}

const nameOf = (path: string) => path.slice(path.lastIndexOf("/") + 1)

/** The directories on a path, from the root down: each loaded from its entry in the one above. */
const chainOf = (load: (path: string, oid: string | undefined) => Dir, root: Dir, filePath: string) => {
  const chain: Array<{ readonly path: string; readonly dir: Dir }> = [{ path: "", dir: root }]
  const parts = filePath.split("/")
  for (let i = 0; i < parts.length - 1; i++) {
    const path = parts.slice(0, i + 1).join("/")
    const above = chain[chain.length - 1]?.dir
    const entry = above?.tree.get(parts[i] ?? "")
    chain.push({ path, dir: load(path, entry?.mode === "40000" ? entry.oid : undefined) })
  }
  return chain
}

/** The change made in its directory: the blob written (keeping an executable's mode), or the entry deleted. */
const editLeaf = (leaf: Dir, change: Change, emit: (object: PackObject) => void) => {
  const name = nameOf(change.path)
  if (change.content === null) {
    leaf.tree.delete(name)
    return
  }
  const blob = objectId("blob", change.content)
  emit({ kind: "whole", id: blob, type: "blob", content: change.content })
  const existing = leaf.tree.get(name)
  leaf.tree.set(name, existing?.mode === "100755" ? "100755" : "100644", blob)
}

/** A commit object's content: the tree, the parent, author and committer, the message. */
const commitBody = (change: Change, tree: string, parent: Head | undefined) => {
  const author = `${change.authorName} <${change.authorEmail}> ${change.time} +0000`
  const committer = `${change.committerName ?? change.authorName} <${change.committerEmail ?? change.authorEmail}> ${change.time} +0000`
  return Buffer.from(`tree ${tree}\n${parent ? `parent ${parent.commit}\n` : ""}author ${author}\ncommitter ${committer}\n\n${change.message}`, "utf8")
}

/**
 * `readTree` answers a tree of the parent's (from the lab's store) by id; `stored` says whether the store holds an
 * object already. Throws when a tree it needs cannot be read.
 */
export const buildCommits = (
  readTree: (oid: string) => StoredTree | undefined,
  parent: Head | undefined,
  changes: ReadonlyArray<Change>,
  stored: (oid: string) => boolean = () => false
): Built => {
  const dirs = new Map<string, Dir>()
  const objects: Array<PackObject> = []
  const made = new Set<string>()
  const heads: Array<Head | undefined> = []
  let head = parent

  const load = (path: string, oid: string | undefined): Dir => {
    const known = dirs.get(path)
    if (known) return known
    let tree = TreeBytes.empty()
    let depth = 0
    if (oid !== undefined && oid !== EMPTY_TREE) {
      const stored = readTree(oid)
      if (stored === undefined) throw new Error(`the tree ${oid} is not in the lab's store`)
      tree = TreeBytes.parse(stored.content)
      depth = stored.depth
    }
    const dir = { tree, oid, depth }
    dirs.set(path, dir)
    return dir
  }

  const emit = (object: PackObject) => {
    if (made.has(object.id)) return
    made.add(object.id)
    objects.push(object)
  }

  /** Write a directory's new version: a delta on the version before when that is smaller; its id. */
  const writeDir = (dir: Dir, before: Buffer | undefined): string => {
    const id = treeId(dir.tree)
    if (id === dir.oid) return id
    // a directory back as an earlier version the store holds (maybe as the base of the version it changes from) is
    // written whole: as a delta on that version it would close a cycle of deltas no reader resolves. It is written
    // all the same, as the push may need it (the store also holds what earlier builds made and never pushed)
    const again = !made.has(id) && stored(id)
    const delta =
      !again && before !== undefined && dir.oid !== undefined && dir.depth < MAX_DELTA_DEPTH ? prefixSuffixDelta(before, dir.tree.bytes) : undefined
    emit(delta && dir.oid ? { kind: "delta", id, baseId: dir.oid, delta } : { kind: "whole", id, type: "tree", content: dir.tree.bytes })
    dir.depth = delta ? dir.depth + 1 : 0
    dir.oid = id
    return id
  }

  for (const change of changes) {
    const root = load("", head?.tree)
    const chain = chainOf(load, root, change.path)
    const before = chain.map(({ dir }) => dir.tree.bytes)
    const leaf = chain[chain.length - 1]?.dir
    if (leaf === undefined) continue
    editLeaf(leaf, change, emit)
    // bottom-up: each changed directory's new id goes into the one above; an emptied one is dropped from it
    for (let i = chain.length - 1; i > 0; i--) {
      const { path, dir } = chain[i] ?? { path: "", dir: root }
      const above = chain[i - 1]?.dir
      if (above === undefined) continue
      if (dir.tree.size === 0) {
        above.tree.delete(nameOf(path))
        dirs.delete(path)
      } else {
        above.tree.set(nameOf(path), "40000", writeDir(dir, before[i]))
      }
    }
    const tree = root.tree.size === 0 ? EMPTY_TREE : writeDir(root, before[0])
    if (root.tree.size === 0) emit({ kind: "whole", id: EMPTY_TREE, type: "tree", content: Buffer.alloc(0) })
    if (head !== undefined && tree === head.tree) {
      heads.push(head)
      continue
    }
    const body = commitBody(change, tree, head)
    const commit = objectId("commit", body)
    emit({ kind: "whole", id: commit, type: "commit", content: body })
    head = { commit, tree }
    heads.push(head)
  }
  return { heads, objects }
}
