import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { CreateStandup, Standup, StandupId, StandupQuery } from "./Standup.js"

/** GET and POST /standups are catalog routes; reading one standup is an extension. */
export class StandupsApi extends HttpApiGroup.make("standups")
  .add(
    HttpApiEndpoint.get("list", "/standups")
      .setUrlParams(Schema.Struct({ ...StandupQuery.fields, ...PageParams }))
      .addSuccess(ListEnvelope(Standup))
      .annotate(OpenApi.Summary, "Standups, newest first, filtered by day range and author")
  )
  .add(
    HttpApiEndpoint.post("create", "/standups")
      .setPayload(CreateStandup)
      .addSuccess(Envelope(Standup), { status: 201 })
      .annotate(OpenApi.Summary, "Post a standup (409 when the author has one for that day)")
  )
  .add(
    HttpApiEndpoint.get("get", "/standups/:id")
      .setPath(Schema.Struct({ id: StandupId }))
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Standup))
      .annotate(OpenApi.Summary, "One standup (extension)")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
