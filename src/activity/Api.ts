import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
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
      .annotateContext(
        OpenApi.annotations({
          summary: "List the activity feed",
          description:
            "The lab's activity, newest first: every create, state change and delete of every resource, and every sync (`Synced <owner>/<repo> …`), each with its kind, the resource it concerns and who did it. For who contributed what, with filters, use GET /api/v1/contributions."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "The lab's activity feed: what happened, to what, by whom."
  ) {}
