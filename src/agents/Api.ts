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
  docs: {
    list: {
      summary: "List agents",
      description: "The lab's agents, newest first, optionally only those in one `status`. Use it to find an agent's id before recording its memory or standups."
    },
    create: {
      summary: "Add an agent",
      description: "Extension. Registers an AI agent of the lab by `name` (unique in the lab, ignoring case) and `model`; it starts `idle`. 409 when the name is taken."
    },
    get: {
      summary: "Get an agent",
      description: "Extension. One agent by id, with its status and `lastActiveAt` (moved by its memory entries, standups and contributions)."
    },
    update: {
      summary: "Update an agent or change its status",
      description: "Extension. Changes name, role, model or `lastActiveAt`, or moves the agent between `idle`, `active` and `paused`, or to `retired` (final). A move the lifecycle forbids, or any change to a retired agent, is 409."
    },
    delete: {
      summary: "Delete an agent",
      description: "Extension. Removes the agent; its memory entries and standups stay, with its id. To keep it visible but inactive, retire it with PATCH instead."
    }
  }
})
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(
    OpenApi.Description,
    "The lab's AI agents and their status: idle ⇄ active ⇄ paused, then retired (final). Agents author memory entries, standups and contributions."
  ) {}
