import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Tags, Text } from "../common/Schemas.js"
import type { Transitions } from "../common/StateMachine.js"

export const SurveyStatus = Schema.Literal("draft", "in_progress", "completed", "archived").annotations({
  description: "draft → in_progress → completed; archived from any of them, final"
})
export type SurveyStatus = typeof SurveyStatus.Type

export const SurveyLifecycle: Transitions<SurveyStatus> = {
  draft: ["in_progress", "archived"],
  in_progress: ["completed", "archived"],
  completed: ["archived"],
  archived: []
}

export const MAX_FINDINGS = 100_000
export const MAX_LINKED_PAPERS = 200

export const PaperIds = Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))).pipe(
  Schema.maxItems(MAX_LINKED_PAPERS)
)

export const SurveyId = resourceId("SurveyId", "srv")
export type SurveyId = typeof SurveyId.Type

export const Survey = LabResource(SurveyId, {
  topic: Schema.String,
  question: Schema.String.annotations({ description: "the research question the survey answers" }),
  status: SurveyStatus,
  findings: Schema.String.annotations({ description: "markdown" }),
  linkedPaperIds: Schema.Array(Schema.String),
  tags: Schema.Array(Schema.String)
}).annotations({ identifier: "Survey" })
export type Survey = typeof Survey.Type

const Topic = Name(300)
const Question = Text(4000)
const Findings = Text(MAX_FINDINGS).annotations({ description: `markdown, at most ${MAX_FINDINGS} characters` })

export const CreateSurvey = Body({
  labId: LabRef,
  topic: Topic,
  question: Schema.optionalWith(Question, { default: () => "" }),
  findings: Schema.optionalWith(Findings, { default: () => "" }),
  linkedPaperIds: Schema.optionalWith(PaperIds, { default: () => [] }).annotations({
    description: "papers of the lab (422 for one that is not)"
  }),
  tags: Schema.optionalWith(Tags, { default: () => [] })
}).annotations({ identifier: "CreateSurvey", description: "a new survey starts as a draft" })
export type CreateSurvey = typeof CreateSurvey.Type

export const UpdateSurvey = Body({
  labId: LabRef,
  topic: Schema.optional(Topic),
  question: Schema.optional(Question),
  findings: Schema.optional(Findings),
  linkedPaperIds: Schema.optional(PaperIds).annotations({ description: "replaces the list" }),
  tags: Schema.optional(Tags).annotations({ description: "replaces the list" }),
  status: Schema.optional(SurveyStatus).annotations({
    description: "a transition of the lifecycle (409 when not allowed); the same status again changes nothing"
  })
}).annotations({ identifier: "UpdateSurvey", description: "an archived survey cannot be changed" })
export type UpdateSurvey = typeof UpdateSurvey.Type

export const SurveyQuery = Schema.Struct({
  labId: LabRef,
  status: Schema.optional(SurveyStatus),
  tag: Schema.optional(Schema.String.pipe(Schema.maxLength(64))).annotations({ description: "only surveys with this tag" }),
  paperId: Schema.optional(Schema.String.pipe(Schema.maxLength(64))).annotations({ description: "only surveys linking this paper" }),
  ...DateRange
})
