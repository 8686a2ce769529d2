import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { CreateSurvey, Survey, SurveyId, SurveyQuery, UpdateSurvey } from "./Survey.js"

/** GET and POST /surveys are catalog routes; reading, changing and deleting one survey are extensions. */
export class SurveysApi extends labResource("surveys", {
  path: "/surveys",
  params: Schema.Struct({ id: SurveyId }),
  query: paged(SurveyQuery.fields),
  item: Survey,
  create: CreateSurvey,
  update: UpdateSurvey,
  docs: {
    list: {
      summary: "List surveys",
      description: "The lab's literature surveys, newest first, filtered by `status`, `tag`, a linked paper and creation time."
    },
    create: {
      summary: "Start a survey",
      description: "Creates a literature survey as a `draft`. Every id in `linkedPaperIds` must be a paper of the lab (422 otherwise)."
    },
    get: {
      summary: "Get a survey",
      description: "Extension. One survey by id."
    },
    update: {
      summary: "Update a survey or change its status",
      description: "Extension. Changes the content (topic, question, findings, linked papers, tags) or moves the survey draft → in_progress → completed, or to archived (final, read-only). A move the lifecycle forbids, or any change to an archived survey, is 409."
    },
    delete: {
      summary: "Delete a survey",
      description: "Extension. Removes the survey; the papers it links stay."
    }
  }
})
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(OpenApi.Description, "Literature surveys: draft → in_progress → completed, or archived; each links papers of the lab.") {}
