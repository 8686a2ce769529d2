import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { Agent, AgentId, AgentStatus, CreateAgent, UpdateAgent } from "./Agent.js"

const AgentPath = Schema.Struct({ id: AgentId })

/** GET /agents is the catalog route; creating, reading one, changing and deleting agents are extensions. */
export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("list", "/agents")
      .setUrlParams(Schema.Struct({ labId: LabRef, status: Schema.optional(AgentStatus), ...PageParams }))
      .addSuccess(ListEnvelope(Agent))
      .annotate(OpenApi.Summary, "The lab's agents, newest first")
  )
  .add(
    HttpApiEndpoint.post("create", "/agents")
      .setPayload(CreateAgent)
      .addSuccess(Envelope(Agent), { status: 201 })
      .annotate(OpenApi.Summary, "Add an agent (extension); it starts idle")
  )
  .add(
    HttpApiEndpoint.get("get", "/agents/:id")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Agent))
      .annotate(OpenApi.Summary, "One agent (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/agents/:id")
      .setPath(AgentPath)
      .setPayload(UpdateAgent)
      .addSuccess(Envelope(Agent))
      .annotate(OpenApi.Summary, "Change an agent or move it through its lifecycle (extension)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/agents/:id")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Agent))
      .annotate(OpenApi.Summary, "Delete an agent (extension); its memory entries and standups stay")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(OpenApi.Description, "The lab's AI agents: idle ⇄ active ⇄ paused, then retired (final).") {}
