import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { ConflictWire } from "../http/Errors.js"
import { labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { Agent, AgentId, AgentStatus, CreateAgent, UpdateAgent } from "./Agent.js"

/** GET /agents is the catalog route; creating, reading one, changing and deleting agents are extensions. */
export class AgentsApi extends labResource("agents", {
  path: "/agents",
  params: Schema.Struct({ id: AgentId }),
  query: paged({ labId: LabRef, status: Schema.optional(AgentStatus) }),
  item: Agent,
  create: CreateAgent,
  update: UpdateAgent,
  summaries: {
    list: "The lab's agents, newest first",
    create: "Add an agent (extension); it starts idle",
    get: "One agent (extension)",
    update: "Change an agent or move it through its lifecycle (extension)",
    delete: "Delete an agent (extension); its memory entries and standups stay"
  }
})
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(OpenApi.Description, "The lab's AI agents: idle ⇄ active ⇄ paused, then retired (final).") {}
