import { Either, Option } from "effect"
import type { StoredState } from "../files/FilesRepo.js"
import { fromRepoPath, normalizePath } from "../files/Paths.js"
import type { GitChange } from "./Git.js"
import { isRegularFile, isSkippedPath } from "./Rules.js"

/**
 * What a pull does with the entries that changed in git, decided before
 * anything is read or written (pure: tested with the rules, spec 4.4).
 */
export interface PullPlan {
  /** Blobs to read, by lab path (the ones whose content may be taken). */
  readonly wanted: Array<{ readonly path: string; readonly oid: string }>
  /** Lab paths whose copy from git is stale or gone (removed if they came from git). */
  readonly gone: Set<string>
  /** Paths in the new tree (a reconcile removes git files not among them). */
  readonly inTree: Set<string>
  /** Figures (images, PDFs) no longer in the tree as regular files. */
  readonly figuresGone: Set<string>
  /** Entries the rules leave out (not regular files, skipped paths, paths the lab cannot hold). */
  skipped: number
}

/** A repository path the lab can hold as it is: one the files API accepts and would not rewrite (no `a/../b`). */
export const isLabPath = (path: string) => Either.getOrUndefined(normalizePath(path)) === path

/**
 * Sort the changed entries. A path with a write waiting in the outbox is left
 * alone (the write wins; it will be committed on top): the database checks
 * that again when the pull writes, for writes acknowledged after this.
 */
export const planChanges = (changes: ReadonlyArray<GitChange>, pending: ReadonlySet<string>): PullPlan => {
  const plan: PullPlan = { wanted: [], gone: new Set(), inTree: new Set(), figuresGone: new Set(), skipped: 0 }
  for (const change of changes) {
    const path = fromRepoPath(change.path)
    if (Option.isSome(change.after)) plan.inTree.add(path)
    if (pending.has(path)) continue
    if (Option.isNone(change.after)) {
      plan.gone.add(path)
      plan.figuresGone.add(path)
    } else if (!isRegularFile(change.after.value) || isSkippedPath(change.path) || !isLabPath(path)) {
      plan.skipped++
      plan.gone.add(path) // a copy pulled earlier is stale now
      plan.figuresGone.add(path)
    } else {
      plan.wanted.push({ path, oid: change.after.value.oid })
    }
  }
  return plan
}

/** A reconcile also removes the git files of its directory that the tree no longer has. */
export const addReconciled = (plan: PullPlan, stored: ReadonlyMap<string, StoredState>, pending: ReadonlySet<string>) => {
  for (const [path, state] of stored) {
    if (state.fromGit && !plan.inTree.has(path) && !pending.has(path)) plan.gone.add(path)
  }
}

/** The removals a pull may make: files that came from git, each at the blob it had when the pull read it. */
export const removalsOf = (plan: PullPlan, stored: ReadonlyMap<string, StoredState>) =>
  [...plan.gone].flatMap((path) => {
    const state = stored.get(path)
    return state?.fromGit === true ? [{ path, expected: state.sha }] : []
  })
