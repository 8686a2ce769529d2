import { Effect, Option } from "effect"
import git from "isomorphic-git"
import type { CommitInfo, GitChange, GitEntry, Head } from "../../src/sync/Git.js"
import { GitError } from "../../src/sync/Git.js"
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

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

export const attempt = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new GitError({ message: `${what}: ${describe(cause)}` }) })

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
    // a path in the prefix itself that is a file is still within the subtree
    return Option.isSome(prefix)
      ? changes.filter((c) => c.path === prefix.value || c.path.startsWith(`${prefix.value}/`))
      : changes
  })

export const readBlob = (repo: Repo, oid: string) =>
  attempt(
    `read blob ${oid}`,
    async () => readFast(repo, oid) ?? (await git.readBlob({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache })).blob
  )

/** The blob through the repository's own reader when it has one (checked against its id); undefined otherwise. */
const readFast = (repo: Repo, oid: string): Uint8Array | undefined => {
  if (repo.objects === undefined) return undefined
  try {
    const object = repo.objects.read(oid)
    return object?.type === "blob" ? object.content : undefined
  } catch {
    return undefined // isomorphic-git reads it, and reports the damage if there is any
  }
}

export const headOf = (repo: Repo, commit: string) =>
  attempt(`read commit ${commit}`, async (): Promise<Head> => {
    const { commit: c } = await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid: commit, cache: repo.cache })
    return { commit, tree: c.tree }
  })

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
      tree,
      parent: base ? [base.commit] : [],
      noUpdateBranch: true,
      cache: repo.cache
    })
    if (!oid) throw new Error("isomorphic-git wrote no commit")
    return { commit: oid, tree }
  })
