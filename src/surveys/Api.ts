import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { createIn, deleteById, getById, labGroup, listOf, paged, updateById } from "../http/LabEndpoints.js"
import { CreateSurvey, Survey, SurveyId, SurveyQuery, UpdateSurvey } from "./Survey.js"

const SurveyPath = Schema.Struct({ id: SurveyId })

/** GET and POST /surveys are catalog routes; reading, changing and deleting one survey are extensions. */
export class SurveysApi extends HttpApiGroup.make("surveys")
  .add(
    listOf("/surveys", paged(SurveyQuery.fields), Survey).annotate(
      OpenApi.Summary,
      "Literature surveys, newest first, filtered by status, tag, linked paper and time"
    )
  )
  .add(createIn("/surveys", CreateSurvey, Survey).annotate(OpenApi.Summary, "Start a survey (as a draft)"))
  .add(getById("/surveys/:id", SurveyPath, Survey).annotate(OpenApi.Summary, "One survey (extension)"))
  .add(
    updateById("/surveys/:id", SurveyPath, UpdateSurvey, Survey).annotate(
      OpenApi.Summary,
      "Change a survey or move it through its lifecycle (extension)"
    )
  )
  .add(deleteById("/surveys/:id", SurveyPath, Survey).annotate(OpenApi.Summary, "Delete a survey (extension)"))
  .pipe(labGroup)
  .addError(ConflictWire) {}
