import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Schema } from "effect"
import { Authentication } from "../http/Authentication.js"
import { Body } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire } from "../http/Errors.js"
import { PageParams } from "../db/Paging.js"
import { CreateLab, Lab } from "./Lab.js"

export class LabsApi extends HttpApiGroup.make("labs")
  .add(HttpApiEndpoint.get("list", "/labs").setUrlParams(Schema.Struct(PageParams)).addSuccess(ListEnvelope(Lab)))
  .add(
    HttpApiEndpoint.post("create", "/labs")
      .setPayload(Body(CreateLab.fields))
      .addSuccess(Envelope(Lab), { status: 201 })
      .addError(ConflictWire)
  )
  .addError(ForbiddenWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
