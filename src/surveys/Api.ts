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
  summaries: {
    list: "Literature surveys, newest first, filtered by status, tag, linked paper and time",
    create: "Start a survey (as a draft)",
    get: "One survey (extension)",
    update: "Change a survey or move it through its lifecycle (extension)",
    delete: "Delete a survey (extension)"
  }
})
  .pipe(labGroup)
  .addError(ConflictWire) {}
