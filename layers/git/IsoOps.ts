import { Effect, Option } from "effect"
import git from "isomorphic-git"
import type { Blob, CommitInfo, GitChange, GitEntry, Head } from "../../src/sync/Git.js"
import { GitError } from "../../src/sync/Git.js"
import { describeFailure, STORE_DAMAGED } from "./GitFailure.js"
import type { ObjectReader } from "./PackReader.js"

/** isomorphic-git's file-system client: node:fs or a memfs volume. */
export type FsClient = Parameters<typeof git.readBlob>[0]["fs"]

export interface Repo {
  readonly fs: FsClient
  readonly gitdir: string
  /** isomorphic-git's object cache, one per job. */
  readonly cache: object
  /** A faster reader of the same store (PackReader.ts), on disk only; isomorphic-git reads whatever it cannot. */
  readonly objects?: ObjectReader
}

/** A store read or write, failing with a fixed description (GitFailure.ts): never an object id or a library's words. */
export const attempt = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new GitError({ message: `${what}: ${describeFailure(cause)}` }) })

type Walked = Awaited<ReturnType<NonNullable<Parameters<typeof git.walk>[0]["map"]>>>
type WalkerEntry = NonNullable<Parameters<NonNullable<Parameters<typeof git.walk>[0]["map"]>>[1][number]>

const entryOf = async (path: string, entry: WalkerEntry | null): Promise<GitEntry | undefined> => {
  if (!entry) return undefined
  const type = await entry.type()
  if (type !== "blob" && type !== "tree" && type !== "commit") return undefined
  return { path, oid: await entry.oid(), mode: (await entry.mode()).toString(8), type }
}

/** Is `path` inside `prefix`, or a directory on the way to it? */
const onPrefixPath = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}/`) || prefix.startsWith(`${path}/`)

/** The entries that differ between two commits; equal subtrees are pruned unread. */
export const diff = (repo: Repo, from: Option.Option<string>, to: string, prefix: Option.Option<string>) =>
  attempt("git diff", async () => {
    const changes = fastDiff(repo, from, to, prefix) ?? (await walkDiff(repo, from, to, prefix))
    // a path in the prefix itself that is a file is still within the subtree
    return Option.isSome(prefix)
      ? changes.filter((c) => c.path === prefix.value || c.path.startsWith(`${prefix.value}/`))
      : changes
  })

/** A tree the fast diff leaves to isomorphic-git: its checks and its errors then apply, as they always did. */
class NotPlain extends Error {}

/** Tree entry modes isomorphic-git accepts, as its walker reports them (mode string, type). */
const MODES: Readonly<Record<string, { readonly mode: string; readonly type: GitEntry["type"] }>> = {
  "40000": { mode: "40000", type: "tree" },
  "040000": { mode: "40000", type: "tree" },
  "100644": { mode: "100644", type: "blob" },
  "100755": { mode: "100755", type: "blob" },
  "120000": { mode: "120000", type: "blob" },
  "160000": { mode: "160000", type: "commit" }
}

/** A tree entry name no path can be made of (empty, or holding a separator or NUL): such an entry is left out. */
const isMalformedName = (name: string): boolean => name.length === 0 || /[/\0]/.test(name)

interface TreeItem {
  readonly name: string
  readonly oid: string
  readonly mode: string
  readonly type: GitEntry["type"]
}

const treeItems = (objects: ObjectReader, oid: string): ReadonlyArray<TreeItem> => {
  const object = objects.read(oid)
  if (object === undefined || object.type !== "tree") throw new NotPlain()
  const content = object.content
  const items: Array<TreeItem> = []
  let pos = 0
  while (pos < content.length) {
    const space = content.indexOf(0x20, pos)
    const nul = space === -1 ? -1 : content.indexOf(0, space + 1)
    if (nul === -1 || nul + 21 > content.length) throw new NotPlain()
    const mode = MODES[content.toString("latin1", pos, space)]
    const name = content.toString("utf8", space + 1, nul)
    if (mode === undefined) throw new NotPlain()
    // names git refuses (`.git` and its aliases, `..`, a backslash) are listed: the sync skips the paths they make
    if (!isMalformedName(name)) items.push({ name, oid: content.toString("hex", nul + 1, nul + 21), ...mode })
    pos = nul + 21
  }
  items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (let i = 1; i < items.length; i++) if (items[i - 1]?.name === items[i]?.name) throw new NotPlain()
  return items
}

/** The tree of a commit (or a tree itself). */
const rootTree = (objects: ObjectReader, oid: string): string => {
  const object = objects.read(oid)
  if (object?.type === "tree") return oid
  const tree = object?.type === "commit" ? /^tree ([0-9a-f]{40})\n/.exec(object.content.toString("latin1", 0, 46))?.[1] : undefined
  if (tree === undefined) throw new NotPlain()
  return tree
}

/**
 * The same diff as `walkDiff`, read through the repository's own object reader
 * (PackReader.ts): no pack is loaded whole, no index parsed, so a small change
 * costs the same on a big repository as on a small one. Undefined when there is
 * no reader or a tree needs isomorphic-git (an unusual mode or name, an object
 * the reader does not hold, a damaged store): then isomorphic-git's walk runs.
 */
const fastDiff = (
  repo: Repo,
  from: Option.Option<string>,
  to: string,
  prefix: Option.Option<string>
): Array<GitChange> | undefined => {
  const objects = repo.objects
  if (objects === undefined) return undefined
  try {
    const changes: Array<GitChange> = []
    const entry = (path: string, item: TreeItem | undefined): GitEntry | undefined =>
      item === undefined ? undefined : { path, oid: item.oid, mode: item.mode, type: item.type }
    const isFile = (e: GitEntry | undefined) => e !== undefined && e.type !== "tree"
    const visit = (dir: string, left: string | undefined, right: string | undefined) => {
      const a = left === undefined ? [] : treeItems(objects, left)
      const b = right === undefined ? [] : treeItems(objects, right)
      let i = 0
      let j = 0
      while (i < a.length || j < b.length) {
        const x = a[i]
        const y = b[j]
        const name = x !== undefined && (y === undefined || x.name <= y.name) ? x.name : (y?.name ?? "")
        const l = x?.name === name ? x : undefined
        const r = y?.name === name ? y : undefined
        if (l) i++
        if (r) j++
        const path = dir === "" ? name : `${dir}/${name}`
        if (Option.isSome(prefix) && !onPrefixPath(path, prefix.value)) continue
        const before = entry(path, l)
        const after = entry(path, r)
        if (before && after && before.oid === after.oid && before.mode === after.mode) continue
        if (isFile(before) || isFile(after)) {
          changes.push({
            path,
            before: Option.fromNullable(isFile(before) ? before : undefined),
            after: Option.fromNullable(isFile(after) ? after : undefined)
          })
        }
        // descend into whichever side is a directory
        if (before?.type === "tree" || after?.type === "tree") {
          visit(path, before?.type === "tree" ? before.oid : undefined, after?.type === "tree" ? after.oid : undefined)
        }
      }
    }
    visit("", Option.isSome(from) ? rootTree(objects, from.value) : undefined, rootTree(objects, to))
    return changes
  } catch {
    return undefined
  }
}

/** The diff through isomorphic-git's walk over two TREE walkers. */
const walkDiff = async (repo: Repo, from: Option.Option<string>, to: string, prefix: Option.Option<string>) => {
  const changes: Array<GitChange> = []
  const trees = Option.isSome(from) ? [git.TREE({ ref: from.value }), git.TREE({ ref: to })] : [git.TREE({ ref: to })]
  await git.walk({
    fs: repo.fs,
    gitdir: repo.gitdir,
    cache: repo.cache,
    trees,
    map: async (path, entries): Promise<Walked> => {
      if (path === ".") return true
      if (Option.isSome(prefix) && !onPrefixPath(path, prefix.value)) return null
      const [a, b] = Option.isSome(from) ? entries : [null, entries[0] ?? null]
      const before = await entryOf(path, a ?? null)
      const after = await entryOf(path, b ?? null)
      if (before && after && before.oid === after.oid && before.mode === after.mode) return null
      const isFile = (e: GitEntry | undefined) => e !== undefined && e.type !== "tree"
      if (isFile(before) || isFile(after)) {
        changes.push({
          path,
          before: Option.fromNullable(isFile(before) ? before : undefined),
          after: Option.fromNullable(isFile(after) ? after : undefined)
        })
      }
      // descend into whichever side is a directory
      return before?.type === "tree" || after?.type === "tree" ? true : undefined
    },
    reduce: async () => undefined
  })
  return changes
}

/** A blob's size, and its content when it has at most `maxBytes`: through the store's reader when there is one. */
export const readBlob = (repo: Repo, oid: string, maxBytes: number): Effect.Effect<Blob, GitError> =>
  Effect.suspend(() => {
    // synchronous when the reader has it: a first sync reads thousands of blobs, a promise each cost a third of that
    const objects = repo.objects
    if (objects !== undefined) {
      let info: ReturnType<ObjectReader["readBounded"]>
      try {
        info = objects.readBounded(oid, maxBytes)
      } catch {
        return Effect.fail(new GitError({ message: `read blob: ${STORE_DAMAGED}` }))
      }
      if (info !== undefined) {
        return info.type === "blob"
          ? Effect.succeed({ size: info.size, content: Option.fromNullable(info.content) })
          : Effect.fail(new GitError({ message: `read blob: the repository's tree names a ${info.type} where a file is` }))
      }
    }
    return attempt("read blob", async () => {
      const { blob } = await git.readBlob({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache })
      return { size: blob.byteLength, content: blob.byteLength > maxBytes ? Option.none() : Option.some(blob) }
    })
  })

export const headOf = (repo: Repo, commit: string) =>
  attempt("read commit", async (): Promise<Head> => {
    const fast = treeOfCommit(repo, commit)
    if (fast !== undefined) return { commit, tree: fast }
    const { commit: c } = await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid: commit, cache: repo.cache })
    return { commit, tree: c.tree }
  })

/** A commit's tree through the repository's own reader; undefined to let isomorphic-git read it. */
const treeOfCommit = (repo: Repo, commit: string): string | undefined => {
  try {
    const object = repo.objects?.read(commit)
    return object?.type === "commit" ? /^tree ([0-9a-f]{40})\n/.exec(object.content.toString("latin1", 0, 46))?.[1] : undefined
  } catch {
    return undefined
  }
}

/** A file to write (text or bytes) or delete (null). */
export interface Edit {
  readonly path: string
  readonly content: string | Uint8Array | null
}

type TreeEntry = { mode: string; path: string; oid: string; type: "blob" | "tree" | "commit" }

/** Write `edits` (paths relative to this tree) into the tree `oid`; None when the result is empty. */
const editTree = async (repo: Repo, oid: string | undefined, edits: ReadonlyArray<Edit>): Promise<string | undefined> => {
  const entries = new Map<string, TreeEntry>()
  if (oid) {
    const { tree } = await git.readTree({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache })
    for (const e of tree) entries.set(e.path, { mode: e.mode, path: e.path, oid: e.oid, type: e.type })
  }
  const nested = new Map<string, Array<Edit>>()
  for (const edit of edits) {
    const slash = edit.path.indexOf("/")
    if (slash === -1) {
      if (edit.content === null) {
        entries.delete(edit.path)
      } else {
        const blob = await git.writeBlob({ fs: repo.fs, gitdir: repo.gitdir, blob: typeof edit.content === "string" ? new TextEncoder().encode(edit.content) : edit.content })
        const existing = entries.get(edit.path)
        const mode = existing?.type === "blob" && existing.mode !== "120000" ? existing.mode : "100644"
        entries.set(edit.path, { mode, path: edit.path, oid: blob, type: "blob" })
      }
    } else {
      const dir = edit.path.slice(0, slash)
      const rest = { path: edit.path.slice(slash + 1), content: edit.content }
      nested.set(dir, [...(nested.get(dir) ?? []), rest])
    }
  }
  for (const [dir, dirEdits] of nested) {
    const existing = entries.get(dir)
    const child = await editTree(repo, existing?.type === "tree" ? existing.oid : undefined, dirEdits)
    if (child === undefined) entries.delete(dir)
    else entries.set(dir, { mode: "040000", path: dir, oid: child, type: "tree" })
  }
  if (entries.size === 0) return undefined
  return git.writeTree({ fs: repo.fs, gitdir: repo.gitdir, tree: [...entries.values()] })
}

/** One commit with `edits` on top of `parent`. */
export const commit = (repo: Repo, parent: Option.Option<Head>, edits: ReadonlyArray<Edit>, info: CommitInfo) =>
  attempt("git commit", async (): Promise<Head> => {
    const base = Option.getOrUndefined(parent)
    const edited = await editTree(repo, base?.tree, edits)
    const tree: string = edited ?? (await git.writeTree({ fs: repo.fs, gitdir: repo.gitdir, tree: [] }))
    const oid = await git.commit({
      fs: repo.fs,
      gitdir: repo.gitdir,
      message: info.message,
      author: { name: info.authorName, email: info.authorEmail },
      committer: { name: info.committerName ?? info.authorName, email: info.committerEmail ?? info.authorEmail },
      tree,
      parent: base ? [base.commit] : [],
      noUpdateBranch: true,
      cache: repo.cache
    })
    if (!oid) throw new Error("isomorphic-git wrote no commit")
    return { commit: oid, tree }
  })
