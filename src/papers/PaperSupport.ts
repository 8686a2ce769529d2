import { Effect, Option } from "effect"
import type { ActivityRepo } from "../activity/ActivityRepo.js"
import { NotFound } from "../http/Errors.js"
import type { LoopStep, Paper, PaperStatus } from "./Paper.js"
import type { PapersRepo } from "./PapersRepo.js"

/** What Papers.ts and PublishLoop.ts share: activity entries of a paper, and a paper locked or 404. */

/** What a status change is called in the activity feed. */
export const VERB: Record<PaperStatus, string> = {
  draft: "returned to draft",
  submitted: "submitted",
  in_review: "is in review",
  revision_requested: "needs a revision",
  accepted: "accepted",
  published: "published",
  withdrawn: "withdrawn"
}

/** An activity entry about the paper, naming its version. */
export const noteFor =
  (activity: ActivityRepo) =>
  (paper: Paper, kind: string, actor: string, message: string, data: Record<string, unknown> = {}) =>
    activity.record({ labId: paper.labId, kind, ref: paper.id, actor, message, data: { version: paper.version, ...data } })

export const notFound = (id: string) => new NotFound({ message: `no paper ${id} in this lab` })

/** The paper, locked for the transaction, or 404. */
export const lockedOrNotFound = (repo: PapersRepo) => (labId: string, id: string) =>
  Effect.flatMap(repo.findForUpdate(labId, id), Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))

/** One step of a publish loop run, as the paper records it. */
export const step = (
  at: Date,
  kind: LoopStep["kind"],
  ok: boolean,
  from: PaperStatus | null,
  to: PaperStatus | null,
  message: string,
  missing: ReadonlyArray<string> = []
): LoopStep => ({ at, kind, ok, from, to, message, missing })
