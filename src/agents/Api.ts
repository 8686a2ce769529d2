import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { ConflictWire } from "../http/Errors.js"
import { createIn, deleteById, getById, labGroup, listOf, paged, updateById } from "../http/LabEndpoints.js"
import { Agent, AgentId, AgentStatus, CreateAgent, UpdateAgent } from "./Agent.js"

const AgentPath = Schema.Struct({ id: AgentId })

/** GET /agents is the catalog route; creating, reading one, changing and deleting agents are extensions. */
export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    listOf("/agents", paged({ labId: LabRef, status: Schema.optional(AgentStatus) }), Agent).annotate(
      OpenApi.Summary,
      "The lab's agents, newest first"
    )
  )
  .add(createIn("/agents", CreateAgent, Agent).annotate(OpenApi.Summary, "Add an agent (extension); it starts idle"))
  .add(getById("/agents/:id", AgentPath, Agent).annotate(OpenApi.Summary, "One agent (extension)"))
  .add(
    updateById("/agents/:id", AgentPath, UpdateAgent, Agent).annotate(
      OpenApi.Summary,
      "Change an agent or move it through its lifecycle (extension)"
    )
  )
  .add(
    deleteById("/agents/:id", AgentPath, Agent).annotate(
      OpenApi.Summary,
      "Delete an agent (extension); its memory entries and standups stay"
    )
  )
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(OpenApi.Description, "The lab's AI agents: idle ⇄ active ⇄ paused, then retired (final).") {}
