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
      .annotateContext(
        OpenApi.annotations({
          summary: "Get the lab's cost report",
          description:
            "The lab's costs by UTC day, currency and category between `from` and `to` (default: the last 30 days, at most 366): pod uptime × costPerHour (compute, from pod sessions) plus the experiment cost records clients posted, with totals per currency. For individual records, use GET /api/v1/experiments/costs."
        })
      )
  )
  .pipe(labGroup)
  .annotate(OpenApi.Description, "What the lab spends: pod uptime and recorded experiment costs, by day, currency and category.") {}
