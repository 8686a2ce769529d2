import { Either, Option } from "effect"
import type { StoredState } from "../files/FilesRepo.js"
import { fromRepoPath, normalizePath } from "../files/Paths.js"
import { isFigurePath } from "../figures/Figure.js"
import type { GitChange } from "./Git.js"
import { isRegularFile, isSkippedPath } from "./Rules.js"

/** A blob a pull reads and stores at a lab path, if the path is still at `expected` (null: absent) when it writes. */
export interface PullRead {
  readonly path: string
  readonly oid: string
  readonly expected: string | null
}

/**
 * What a pull does with the entries that changed in git, decided before
 * anything is read or written (pure: tested with the rules, spec 4.4).
 */
export interface PullPlan {
  /** Blobs to read and store (the ones whose content may be taken and differs from the stored copy). */
  readonly toRead: ReadonlyArray<PullRead>
  /** Lab paths whose copy from git is stale or gone (removed if they came from git). */
  readonly gone: ReadonlySet<string>
  /** Figures (images, PDFs) no longer in the tree as regular files. */
  readonly figuresGone: ReadonlyArray<string>
  /** Entries the rules leave out (not regular files, skipped paths, paths the lab cannot hold). */
  readonly skipped: number
}

export interface PullOptions {
  /**
   * A full reconcile (first sync, new link, a subtree): `changes` list the whole tree, `stored` holds every stored
   * file of the directory, and git files the tree no longer has are removed too.
   */
  readonly reconcile: boolean
  /** The figures recorded under the directory (a reconcile forgets the ones the tree no longer has). */
  readonly figures: Iterable<string>
}

const INCREMENTAL: PullOptions = { reconcile: false, figures: [] }

/** A repository path the lab can hold as it is: one the files API accepts and would not rewrite (no `a/../b`). */
export const isLabPath = (path: string) => Either.getOrUndefined(normalizePath(path)) === path

/** The lab paths whose stored state an incremental pull needs (a path with a write waiting is left alone). */
export const lookupPaths = (changes: ReadonlyArray<GitChange>, pending: ReadonlySet<string>): Array<string> =>
  changes.map((change) => fromRepoPath(change.path)).filter((path) => !pending.has(path))

/**
 * The plan of a pull. A path with a write waiting in the outbox is left alone (the write wins; it will be committed
 * on top): the database checks that again when the pull writes, for writes acknowledged after this.
 */
export const planPull = (
  changes: ReadonlyArray<GitChange>,
  stored: ReadonlyMap<string, StoredState>,
  pending: ReadonlySet<string>,
  options: PullOptions = INCREMENTAL
): PullPlan => {
  const toRead: Array<PullRead> = []
  const gone = new Set<string>()
  const inTree = new Set<string>()
  const figuresGone = new Set<string>()
  let skipped = 0
  for (const change of changes) {
    const path = fromRepoPath(change.path)
    if (Option.isSome(change.after)) inTree.add(path)
    if (pending.has(path)) continue
    if (Option.isSome(change.after) && isRegularFile(change.after.value) && !isSkippedPath(change.path) && isLabPath(path)) {
      const oid = change.after.value.oid
      const expected = stored.get(path)?.sha ?? null
      if (expected !== oid) toRead.push({ path, oid, expected })
      continue
    }
    // deleted, or left out by the rules: a copy pulled earlier is stale now
    if (Option.isSome(change.after)) skipped++
    gone.add(path)
    figuresGone.add(path)
  }
  if (options.reconcile) {
    for (const [path, state] of stored) {
      if (state.fromGit && !inTree.has(path) && !pending.has(path)) gone.add(path)
    }
    for (const path of options.figures) if (!inTree.has(path)) figuresGone.add(path)
  }
  return { toRead, gone, figuresGone: [...figuresGone].filter(isFigurePath), skipped }
}

/** The removals a pull may make: files that came from git, each at the blob it had when the pull read it. */
export const removalsOf = (gone: Iterable<string>, stored: ReadonlyMap<string, StoredState>) =>
  [...gone].flatMap((path) => {
    const state = stored.get(path)
    return state?.fromGit === true ? [{ path, expected: state.sha }] : []
  })
