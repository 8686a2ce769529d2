import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { CreateSurvey, Survey, SurveyId, SurveyQuery, UpdateSurvey } from "./Survey.js"

const SurveyPath = Schema.Struct({ id: SurveyId })

/** GET and POST /surveys are catalog routes; reading, changing and deleting one survey are extensions. */
export class SurveysApi extends HttpApiGroup.make("surveys")
  .add(
    HttpApiEndpoint.get("list", "/surveys")
      .setUrlParams(Schema.Struct({ ...SurveyQuery.fields, ...PageParams }))
      .addSuccess(ListEnvelope(Survey))
      .annotate(OpenApi.Summary, "Literature surveys, newest first, filtered by status, tag, linked paper and time")
  )
  .add(
    HttpApiEndpoint.post("create", "/surveys")
      .setPayload(CreateSurvey)
      .addSuccess(Envelope(Survey), { status: 201 })
      .annotate(OpenApi.Summary, "Start a survey (as a draft)")
  )
  .add(
    HttpApiEndpoint.get("get", "/surveys/:id")
      .setPath(SurveyPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Survey))
      .annotate(OpenApi.Summary, "One survey (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/surveys/:id")
      .setPath(SurveyPath)
      .setPayload(UpdateSurvey)
      .addSuccess(Envelope(Survey))
      .annotate(OpenApi.Summary, "Change a survey or move it through its lifecycle (extension)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/surveys/:id")
      .setPath(SurveyPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Survey))
      .annotate(OpenApi.Summary, "Delete a survey (extension)")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
