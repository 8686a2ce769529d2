import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { CreateMemory, MemoryEntry, MemoryId, MemoryQuery } from "./Memory.js"

const MemoryPath = Schema.Struct({ id: MemoryId })

/** GET and POST /memory are catalog routes; reading and deleting one entry are extensions. */
export class MemoryApi extends HttpApiGroup.make("memory")
  .add(
    HttpApiEndpoint.get("list", "/memory")
      .setUrlParams(Schema.Struct({ ...MemoryQuery.fields, ...PageParams }))
      .addSuccess(ListEnvelope(MemoryEntry))
      .annotate(OpenApi.Summary, "Agents' memory entries, newest first, filtered by agent, kind, tag and time")
  )
  .add(
    HttpApiEndpoint.post("create", "/memory")
      .setPayload(CreateMemory)
      .addSuccess(Envelope(MemoryEntry), { status: 201 })
      .annotate(OpenApi.Summary, "Record a memory entry for an agent (422 for an agent not in the lab, 409 for a retired one)")
  )
  .add(
    HttpApiEndpoint.get("get", "/memory/:id")
      .setPath(MemoryPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(MemoryEntry))
      .annotate(OpenApi.Summary, "One memory entry (extension)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/memory/:id")
      .setPath(MemoryPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(MemoryEntry))
      .annotate(OpenApi.Summary, "Forget a memory entry (extension)")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
