import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { CreateKnowledge, KnowledgeEntry, KnowledgeId, KnowledgeQuery, UpdateKnowledge } from "./Knowledge.js"

const KnowledgePath = Schema.Struct({ id: KnowledgeId })

/** GET and POST /knowledge are catalog routes; reading, changing and deleting one entry are extensions. */
export class KnowledgeApi extends HttpApiGroup.make("knowledge")
  .add(
    HttpApiEndpoint.get("list", "/knowledge")
      .setUrlParams(Schema.Struct({ ...KnowledgeQuery.fields, ...PageParams }))
      .addSuccess(ListEnvelope(KnowledgeEntry))
      .annotate(OpenApi.Summary, "The lab's knowledge, newest first, filtered by tag and time")
  )
  .add(
    HttpApiEndpoint.post("create", "/knowledge")
      .setPayload(CreateKnowledge)
      .addSuccess(Envelope(KnowledgeEntry), { status: 201 })
      .annotate(OpenApi.Summary, "Add a knowledge entry")
  )
  .add(
    HttpApiEndpoint.get("get", "/knowledge/:id")
      .setPath(KnowledgePath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(KnowledgeEntry))
      .annotate(OpenApi.Summary, "One knowledge entry (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/knowledge/:id")
      .setPath(KnowledgePath)
      .setPayload(UpdateKnowledge)
      .addSuccess(Envelope(KnowledgeEntry))
      .annotate(OpenApi.Summary, "Change a knowledge entry (extension); sources and tags are replaced as a whole")
  )
  .add(
    HttpApiEndpoint.del("delete", "/knowledge/:id")
      .setPath(KnowledgePath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(KnowledgeEntry))
      .annotate(OpenApi.Summary, "Delete a knowledge entry (extension)")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
