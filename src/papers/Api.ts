import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { labGroup, labResource } from "../http/LabEndpoints.js"
import { PageParams } from "../db/Paging.js"
import { CreatePaper, LabBody, Paper, PaperId, PaperListParams, PaperVersion, TransitionPaper, UpdatePaper } from "./Paper.js"

const PaperPath = Schema.Struct({ id: PaperId })

/**
 * Catalog: GET/POST /papers and POST /papers/{id}/publish-loop. Extensions:
 * one paper (GET/PATCH/DELETE), its published versions, and manual status
 * transitions (docs/papers.md).
 */
export class PapersApi extends labResource("papers", {
  path: "/papers",
  params: PaperPath,
  query: PaperListParams,
  item: Paper,
  create: CreatePaper,
  update: UpdatePaper,
  summaries: {
    list: "The lab's papers, newest first, filtered by status and creation time",
    create: "Create a paper (a draft, version 1)",
    get: "One paper with its publish-loop state and steps (extension)",
    update: "Change a paper; a change to a published paper starts its next version as a draft (extension)",
    delete: "Delete a paper that was never published (extension)"
  },
  conflicts: ["update", "delete"]
})
  .add(
    HttpApiEndpoint.get("versions", "/papers/:id/versions")
      .setPath(PaperPath)
      .setUrlParams(Schema.Struct({ labId: LabRef, ...PageParams }))
      .addSuccess(ListEnvelope(PaperVersion))
      .annotate(OpenApi.Summary, "The paper's published versions, frozen, newest first (extension)")
  )
  .add(
    HttpApiEndpoint.post("publishLoop", "/papers/:id/publish-loop")
      .setPath(PaperPath)
      .setPayload(LabBody)
      .addSuccess(Envelope(Paper).annotations({ description: "the loop was started, or is running (the same run)" }), { status: 202 })
      .addSuccess(Envelope(Paper).annotations({ description: "the paper is published already: nothing to do" }))
      .addError(ConflictWire)
      .annotate(
        OpenApi.Summary,
        "Start the publish loop: check the paper's files exist in the lab and advance it step by step to published"
      )
  )
  .add(
    HttpApiEndpoint.post("transition", "/papers/:id/transition")
      .setPath(PaperPath)
      .setPayload(TransitionPaper)
      .addSuccess(Envelope(Paper))
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Move a paper along its lifecycle by hand: a review decision, a resubmission, a withdrawal (extension)")
  )
  .pipe(labGroup) {}
