import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import type { GitFigureFile } from "./Figure.js"
import { FiguresRepo } from "./FiguresRepo.js"

export { isFigurePath } from "./Figure.js"

/**
 * The figures of a linked repository, as the sync engine sees them: every
 * regular file named .png .jpg .jpeg .gif .svg .webp or .pdf that a pull reads
 * (images and PDFs are binary, so the sync skips them as files) is recorded with
 * its path, size, blob id and commit; a figure deleted in git is forgotten.
 * Called inside the pull's transaction.
 */
export class GitFigures extends Effect.Service<GitFigures>()("GitFigures", {
  dependencies: [FiguresRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* FiguresRepo
    const activity = yield* ActivityRepo

    /** Record what one pull found and forget what is gone; one activity entry when anything changed. */
    const apply = (labId: string, commit: string, found: ReadonlyArray<GitFigureFile>, gone: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const { added, changed } = yield* repo.upsertGit(labId, commit, found)
        const removed = yield* repo.removeGit(labId, gone)
        if (added + changed + removed === 0) return
        yield* activity.record({
          labId,
          kind: "figure.synced",
          ref: commit,
          actor: "sync",
          message: `Figures from git: ${added} added, ${changed} updated, ${removed} removed (${commit.slice(0, 7)})`,
          data: { added, updated: changed, removed, sha: commit.slice(0, 7) }
        })
      })

    return { apply, pathsUnder: repo.gitPathsUnder }
  })
}) {}
