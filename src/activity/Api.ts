import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { ListEnvelope } from "../http/Envelope.js"
import { PageParams } from "../db/Paging.js"
import { labGroup } from "../http/LabEndpoints.js"
import { Activity } from "./Activity.js"

export class ActivityApi extends HttpApiGroup.make("activity")
  .add(
    HttpApiEndpoint.get("list", "/activity")
      .setUrlParams(Schema.Struct({ labId: LabRef, ...PageParams }))
      .addSuccess(ListEnvelope(Activity))
  )
  .pipe(labGroup) {}
