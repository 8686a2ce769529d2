import type { ActivityRepo } from "../activity/ActivityRepo.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import type { LoopStep, Paper, PaperId, PaperStatus } from "./Paper.js"
import type { PapersRepo } from "./PapersRepo.js"
import { inTransaction } from "../db/Transaction.js"

/** What Papers.ts and PublishLoop.ts share: activity entries of a paper, a paper locked or 404, a 409 about it. */

export const RESOURCE = "paper"

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

export type Note = ReturnType<typeof noteFor>

/** The paper, locked for the transaction, or 404. */
export const lockedOrNotFound = (repo: PapersRepo) => (labId: LabId, id: PaperId) =>
  orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))

/** 409: the paper's state does not allow it. */
export const conflict = (id: PaperId, problem: string) => new StateConflict({ resource: RESOURCE, id, problem })

/** Runs an effect in one transaction; a database failure is a defect. */
export const transactional = inTransaction

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
