import { Schema } from "effect"
import { Body, DateRange, LabRef, Name, Timestamp } from "../common/Schemas.js"
import { PageParams } from "../db/Paging.js"

export const ContributorKind = Schema.Literal("credential", "agent", "user", "system").annotations({
  description:
    "credential: an API key (or the operator's key); agent: one of the lab's AI agents; user: a person signed in with a JWT; " +
    "system: the service itself (e.g. `sync`)"
})
export type ContributorKind = typeof ContributorKind.Type

export const ContributionSource = Schema.Literal("activity", "recorded").annotations({
  description: "activity: derived from the lab's activity feed; recorded: recorded explicitly with POST /contributions"
})

/** `experiment.created`, `paper`, `review.written`: dot-separated lowercase words. */
export const ContributionKind = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/, {
    message: () => "must be lowercase words separated by dots, e.g. analysis.written"
  }),
  Schema.maxLength(64)
)

const AgentId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be an agent id (1-64 letters, digits, _ or -)" })
)

/** Who contributed what, when. */
export const Contribution = Schema.Struct({
  id: Schema.String.annotations({ description: "the activity entry's id (act_…) or the recorded contribution's (ctb_…)" }),
  labId: Schema.String,
  contributor: Schema.String.annotations({ description: "a key id, user id, agent id, or a system actor such as `sync`" }),
  contributorKind: ContributorKind,
  kind: Schema.String,
  ref: Schema.NullOr(Schema.String).annotations({ description: "what it was about: a resource id, a path, a commit" }),
  summary: Schema.String,
  source: ContributionSource,
  at: Timestamp
}).annotations({ identifier: "Contribution" })
export type Contribution = typeof Contribution.Type

export const RecordContribution = Body({
  labId: LabRef,
  agentId: Schema.optional(AgentId).annotations({
    description: "credit one of the lab's agents (422 if the lab has no such agent, 409 if it is retired); default: the calling credential"
  }),
  kind: ContributionKind,
  ref: Schema.optional(Name(500)),
  summary: Name(2000)
})
export type RecordContribution = typeof RecordContribution.Type

const Filters = {
  contributor: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).annotations({
    description: "only this contributor (a key, user or agent id, or `sync`)"
  }),
  contributorKind: Schema.optional(ContributorKind),
  kind: Schema.optional(ContributionKind).annotations({
    description: "only this kind; a kind without a dot also matches its family (`paper` matches paper.created, paper.submitted…)"
  }),
  ref: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500))).annotations({
    description: "only contributions to this resource"
  }),
  ...DateRange
}

export const ContributionQuery = Schema.Struct({ labId: LabRef, ...Filters, ...PageParams })

/** Counts per contributor. */
export const ContributorSummary = Schema.Struct({
  contributor: Schema.String,
  contributorKind: ContributorKind,
  count: Schema.Number,
  kinds: Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({ description: "count per kind" }),
  firstAt: Timestamp,
  lastAt: Timestamp
}).annotations({ identifier: "ContributorSummary" })
export type ContributorSummary = typeof ContributorSummary.Type

export const SummaryQuery = ContributionQuery
