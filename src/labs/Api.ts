import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../http/Authentication.js"
import { Body } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire } from "../http/Errors.js"
import { PageParams } from "../db/Paging.js"
import { CreateLab, Lab } from "./Lab.js"

export class LabsApi extends HttpApiGroup.make("labs")
  .add(
    HttpApiEndpoint.get("list", "/labs")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ListEnvelope(Lab))
      .annotateContext(
        OpenApi.annotations({
          summary: "List labs",
          description:
            "The labs this credential's scopes name (the operator: all), newest first. Every lab-scoped route takes one of their ids or slugs as `labId`."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/labs")
      .setPayload(Body(CreateLab.fields))
      .addSuccess(Envelope(Lab), { status: 201 })
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a lab",
          description:
            "Operator only (an extension). Creates a lab with a unique `slug` (409 when taken), a name and a plan (`free`, `pro`, `team`), which sets its rate limits and quotas. Then mint keys for it with POST /api/v1/auth/keys."
        })
      )
  )
  .addError(ForbiddenWire)
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(
    OpenApi.Description,
    "Labs: the unit every resource belongs to, with a slug and a plan."
  ) {}
