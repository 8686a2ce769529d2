import type * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Option } from "effect"
import type { ActivityRepo } from "../activity/ActivityRepo.js"
import type { SecretBox } from "../common/SecretBox.js"
import type { FilesRepo } from "../files/FilesRepo.js"
import type { GitFigures } from "../figures/GitFigures.js"
import type { LabId } from "../labs/LabId.js"
import { type Git, GitError, type GitRemote } from "./Git.js"
import { type RepoLink, type SyncResult, tokenIsBound } from "./RepoLink.js"
import type { SyncRepo } from "./SyncRepo.js"

/** What the sync engine's pull and push work with (SyncEngine.ts builds it). */
export interface EngineDeps {
  readonly sql: SqlClient.SqlClient
  readonly git: Context.Tag.Service<typeof Git>
  readonly box: Context.Tag.Service<typeof SecretBox>
  readonly links: SyncRepo
  readonly files: FilesRepo
  readonly activity: ActivityRepo
  readonly figures: GitFigures
}

export const emptyResult = (sha: string): SyncResult => ({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha })

/** The remote, with the stored token only when the repository is on the origin the token was given for. */
export const remoteOf = (deps: EngineDeps, link: RepoLink): Effect.Effect<GitRemote, GitError> =>
  link.tokenSealed === null || !tokenIsBound(link)
    ? Effect.succeed({ url: link.repo, branch: link.defaultBranch, token: Option.none() })
    : Effect.map(
        Effect.mapError(deps.box.open(link.tokenSealed), (e) => new GitError({ message: `the stored token: ${e.message}` })),
        (token) => ({ url: link.repo, branch: link.defaultBranch, token: Option.some(token) })
      )

export const linkOf = (deps: EngineDeps, labId: LabId) =>
  Effect.flatMap(
    deps.links.link(labId),
    Option.match({
      onNone: () => Effect.fail(new GitError({ message: "the lab has no linked repository" })),
      onSome: Effect.succeed
    })
  )
