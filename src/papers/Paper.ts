import { Schema } from "effect"
import type { Transitions } from "../common/StateMachine.js"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Text, Timestamp } from "../common/Schemas.js"
import { FilePath } from "../files/File.js"
import { PageParams } from "../db/Paging.js"

/**
 * A paper's lifecycle (arXiv / OpenReview): draft → submitted → in_review →
 * accepted → published, with in_review → revision_requested → submitted for a
 * revision, and withdrawn from any state that is not final. published and
 * withdrawn are final; a change to a published paper starts a new version.
 */
export const PaperStatus = Schema.Literal("draft", "submitted", "in_review", "revision_requested", "accepted", "published", "withdrawn")
export type PaperStatus = typeof PaperStatus.Type

export const PaperMachine: Transitions<PaperStatus> = {
  draft: ["submitted", "withdrawn"],
  submitted: ["in_review", "withdrawn"],
  in_review: ["revision_requested", "accepted", "withdrawn"],
  revision_requested: ["submitted", "withdrawn"],
  accepted: ["published", "withdrawn"],
  published: [],
  withdrawn: []
}

/** The step the publish loop takes from each state on its way to published. */
export const LOOP_NEXT: Partial<Record<PaperStatus, PaperStatus>> = {
  draft: "submitted",
  submitted: "in_review",
  in_review: "accepted",
  revision_requested: "submitted",
  accepted: "published"
}

export const MAX_AUTHORS = 100
export const MAX_PAPER_FILES = 100

const Email = Schema.String.pipe(
  Schema.maxLength(320),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an email address" })
)

export const Author = Schema.Struct({
  name: Name(200),
  affiliation: Schema.optional(Name(300)),
  email: Schema.optional(Email)
}).annotations({ identifier: "PaperAuthor" })
export type Author = typeof Author.Type

export const Authors = Schema.Array(Author).pipe(Schema.maxItems(MAX_AUTHORS))

/** Paths of the paper's files in the lab (the publish loop checks they exist). */
export const PaperFiles = Schema.Array(FilePath).pipe(
  Schema.maxItems(MAX_PAPER_FILES),
  Schema.filter((paths) => new Set(paths).size === paths.length || "must not list a path twice")
)

export const LoopStatus = Schema.Literal("idle", "running", "done", "failed")
export type LoopStatus = typeof LoopStatus.Type

/** One recorded step of a publish-loop run. */
export const LoopStep = Schema.Struct({
  at: Timestamp,
  kind: Schema.Literal("check_files", "advance", "stop").annotations({
    description: "check_files: the paper's files were looked up in the lab; advance: the status moved one step; stop: the run was stopped"
  }),
  ok: Schema.Boolean,
  from: Schema.NullOr(PaperStatus),
  to: Schema.NullOr(PaperStatus),
  message: Schema.String,
  missing: Schema.Array(Schema.String).annotations({ description: "check_files: the paths not found in the lab" })
}).annotations({ identifier: "PaperLoopStep" })
export type LoopStep = typeof LoopStep.Type

export const PaperLoop = Schema.Struct({
  runId: Schema.NullOr(Schema.String).annotations({ description: "the current (or last) run; the same while it runs" }),
  status: LoopStatus,
  steps: Schema.Array(LoopStep).annotations({ description: "the steps of the current (or last) run, oldest first" }),
  startedBy: Schema.NullOr(Schema.String),
  startedAt: Schema.NullOr(Timestamp),
  finishedAt: Schema.NullOr(Timestamp),
  error: Schema.NullOr(Schema.String).annotations({ description: "why the last run failed" })
}).annotations({ identifier: "PaperLoop" })
export type PaperLoop = typeof PaperLoop.Type

export const PaperId = resourceId("PaperId", "paper")
export type PaperId = typeof PaperId.Type

export const Paper = LabResource(PaperId, {
  title: Schema.String,
  abstract: Schema.String,
  authors: Schema.Array(Author),
  files: Schema.Array(Schema.String),
  status: PaperStatus.annotations({ description: "status of the current version" }),
  version: Schema.Number.annotations({ description: "the current version, from 1; a change to a published paper starts the next" }),
  publishedVersion: Schema.NullOr(Schema.Number).annotations({
    description: "the newest published version (readable at /papers/{id}/versions), or null"
  }),
  publishedAt: Schema.NullOr(Timestamp).annotations({ description: "when the current version was published" }),
  loop: PaperLoop
}).annotations({ identifier: "Paper" })
export type Paper = typeof Paper.Type

/** A published version, frozen: its text and the blob id and size of each file as published. */
export const PaperVersion = Schema.Struct({
  paperId: Schema.String,
  labId: Schema.String,
  version: Schema.Number,
  title: Schema.String,
  abstract: Schema.String,
  authors: Schema.Array(Author),
  files: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      sha: Schema.String.annotations({ description: "git blob id of the file when it was published" }),
      size: Schema.Number
    })
  ),
  status: Schema.Literal("published"),
  publishedAt: Timestamp,
  publishedBy: Schema.String
}).annotations({ identifier: "PaperVersion" })
export type PaperVersion = typeof PaperVersion.Type

export const CreatePaper = Body({
  labId: LabRef,
  title: Name(500),
  abstract: Schema.optionalWith(Text(10_000), { default: () => "" }),
  authors: Schema.optionalWith(Authors, { default: () => [] }),
  files: Schema.optionalWith(PaperFiles, { default: () => [] })
}).annotations({ identifier: "CreatePaper" })
export type CreatePaper = typeof CreatePaper.Type

export const UpdatePaper = Body({
  labId: LabRef,
  title: Schema.optional(Name(500)),
  abstract: Schema.optional(Text(10_000)),
  authors: Schema.optional(Authors),
  files: Schema.optional(PaperFiles)
}).annotations({
  identifier: "UpdatePaper",
  description: "change a paper; on a published paper this starts the next version (a draft) and the published one stays readable"
})
export type UpdatePaper = typeof UpdatePaper.Type

export const TransitionPaper = Body({
  labId: LabRef,
  to: PaperStatus.annotations({ description: "the state to move to; published is reached only through the publish loop" }),
  note: Schema.optional(Text(2_000))
}).annotations({ identifier: "TransitionPaper" })
export type TransitionPaper = typeof TransitionPaper.Type

export const LabBody = Body({ labId: LabRef })

export const PaperListParams = Schema.Struct({ labId: LabRef, status: Schema.optional(PaperStatus), ...DateRange, ...PageParams })
