import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { labGroup } from "../http/LabEndpoints.js"
import { Contribution, ContributionQuery, ContributorSummary, RecordContribution, SummaryQuery } from "./Contribution.js"

export class ContributionsApi extends HttpApiGroup.make("contributions")
  .add(
    HttpApiEndpoint.get("list", "/contributions")
      .setUrlParams(ContributionQuery)
      .addSuccess(ListEnvelope(Contribution))
      .annotateContext(
        OpenApi.annotations({
          summary: "List contributions",
          description:
            "Who contributed what, newest first: the lab's activity entries credited to their agent or actor, plus recorded contributions, filtered by contributor, contributor kind, kind (`paper` matches `paper.*`), ref and time. For counts per contributor, use /contributions/summary."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("record", "/contributions")
      .setPayload(RecordContribution)
      .addSuccess(Envelope(Contribution), { status: 201 })
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Record a contribution",
          description:
            "Records work no route records by itself (an analysis, a review) with a kind, a summary and an optional ref, credited to `agentId` or else to the calling credential. 409 when the agent is retired."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("summary", "/contributions/summary")
      .setUrlParams(SummaryQuery)
      .addSuccess(ListEnvelope(ContributorSummary).annotations({ description: "extension: counts per contributor, most first" }))
      .annotateContext(
        OpenApi.annotations({
          summary: "Summarise contributions per contributor",
          description:
            "Extension. With the list's filters, one row per contributor, most contributions first: the count, the count per kind and the first and last time."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Who contributed what to the lab, from its activity feed and contributions recorded explicitly."
  ) {}
