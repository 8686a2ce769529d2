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
  docs: {
    list: {
      summary: "List papers",
      description: "The lab's papers, newest first, filtered by `status` and creation time. To find papers by their words, use GET /api/v1/search with `kinds=papers`."
    },
    create: {
      summary: "Create a paper",
      description: "Creates a paper as a `draft`, version 1, with its title, abstract, authors and the lab files it is made of. Publish it with POST /api/v1/papers/{id}/publish-loop."
    },
    get: {
      summary: "Get a paper",
      description: "Extension. One paper by id, with its publish loop's state and steps: poll it after starting the loop."
    },
    update: {
      summary: "Update a paper",
      description: "Extension. Changes title, abstract, authors or files. Changing a published paper starts its next version as a draft (the published one stays under /versions). 409 for a withdrawn paper or while the publish loop runs."
    },
    delete: {
      summary: "Delete a paper",
      description: "Extension. Removes a paper that was never published, ending any publish loop; a paper with a published version cannot be deleted (409)."
    }
  },
  conflicts: ["update", "delete"]
})
  .add(
    HttpApiEndpoint.get("versions", "/papers/:id/versions")
      .setPath(PaperPath)
      .setUrlParams(Schema.Struct({ labId: LabRef, ...PageParams }))
      .addSuccess(ListEnvelope(PaperVersion))
      .annotateContext(
        OpenApi.annotations({
          summary: "List a paper's published versions",
          description: "Extension. Every published version of the paper, newest first, frozen as published: its text and the blob id and size of each of its files then."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("publishLoop", "/papers/:id/publish-loop")
      .setPath(PaperPath)
      .setPayload(LabBody)
      .addSuccess(Envelope(Paper).annotations({ description: "the loop was started, or is running (the same run)" }), { status: 202 })
      .addSuccess(Envelope(Paper).annotations({ description: "the paper is published already: nothing to do" }))
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Start a paper's publish loop",
          description:
            "Starts a background run that checks the paper's files exist in the lab and moves the paper one status at a time to `published`: 202 with the run (the same run when one is going, so it is safe to repeat), 200 when it is published already, 409 when withdrawn. Follow it with GET /api/v1/papers/{id}; a missing file stops the run with `loop.status: failed`."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("transition", "/papers/:id/transition")
      .setPath(PaperPath)
      .setPayload(TransitionPaper)
      .addSuccess(Envelope(Paper))
      .addError(ConflictWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a paper's status",
          description:
            "Extension. Moves a paper along its lifecycle by hand (`to`, with an optional `note`): a submission, a review decision, a resubmission, a withdrawal. `published` is reached only through the publish loop; a move the lifecycle forbids is 409 naming the allowed ones."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "The lab's papers: draft → submitted → in_review → (revision_requested →) accepted → published, or withdrawn; published versions are frozen."
  ) {}
