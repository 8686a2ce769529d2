import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { labGroup } from "../http/LabEndpoints.js"
import { Contribution, ContributionQuery, ContributorSummary, RecordContribution, SummaryQuery } from "./Contribution.js"

export class ContributionsApi extends HttpApiGroup.make("contributions")
  .add(
    HttpApiEndpoint.get("list", "/contributions")
      .setUrlParams(ContributionQuery)
      .addSuccess(ListEnvelope(Contribution))
  )
  .add(
    HttpApiEndpoint.post("record", "/contributions")
      .setPayload(RecordContribution)
      .addSuccess(Envelope(Contribution), { status: 201 })
      .addError(ConflictWire)
  )
  .add(
    HttpApiEndpoint.get("summary", "/contributions/summary")
      .setUrlParams(SummaryQuery)
      .addSuccess(ListEnvelope(ContributorSummary).annotations({ description: "extension: counts per contributor, most first" }))
  )
  .pipe(labGroup) {}
