import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Envelope } from "../http/Envelope.js"
import { labGroup } from "../http/LabEndpoints.js"
import { CostQuery, CostReport } from "./Cost.js"

/** Catalog: GET /costs. */
export class CostsApi extends HttpApiGroup.make("costs")
  .add(
    HttpApiEndpoint.get("report", "/costs")
      .setUrlParams(CostQuery)
      .addSuccess(Envelope(CostReport))
      .annotate(
        OpenApi.Summary,
        "The lab's costs by UTC day, currency and category: pod uptime × costPerHour (compute, from pod sessions) plus the experiment cost records clients posted."
      )
  )
  .pipe(labGroup) {}
