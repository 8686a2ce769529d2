import { Schema } from "effect"
import { Body, LabRef, LabResource, Name, resourceId, Text, Timestamp } from "../common/Schemas.js"
import type { Transitions } from "../common/StateMachine.js"

export const AgentStatus = Schema.Literal("idle", "active", "paused", "retired").annotations({
  description: "idle, active or paused move freely among themselves; retired is final"
})
export type AgentStatus = typeof AgentStatus.Type

/** The agent lifecycle: idle, active and paused move freely among themselves; retired is final. */
export const AgentLifecycle: Transitions<AgentStatus> = {
  idle: ["active", "paused", "retired"],
  active: ["idle", "paused", "retired"],
  paused: ["idle", "active", "retired"],
  retired: []
}

export const AgentId = resourceId("AgentId", "agent")
export type AgentId = typeof AgentId.Type

export const Agent = LabResource(AgentId, {
  name: Schema.String.annotations({ description: "unique in the lab (case-insensitive)" }),
  role: Schema.String.annotations({ description: "what the agent does, free text" }),
  model: Schema.String.annotations({ description: "the model it runs on, e.g. claude-sonnet-4" }),
  status: AgentStatus,
  lastActiveAt: Schema.NullOr(Timestamp).annotations({
    description: "when it last recorded memory, a standup or a contribution (or what PATCH set); null before that"
  })
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type

export const AgentName = Name(100)
export const AgentRole = Text(500)
export const AgentModel = Name(200)

export const CreateAgent = Body({
  labId: LabRef,
  name: AgentName,
  role: Schema.optionalWith(AgentRole, { default: () => "" }),
  model: AgentModel
}).annotations({ identifier: "CreateAgent", description: "a new agent starts idle" })
export type CreateAgent = typeof CreateAgent.Type

export const UpdateAgent = Body({
  labId: LabRef,
  name: Schema.optional(AgentName),
  role: Schema.optional(AgentRole),
  model: Schema.optional(AgentModel),
  status: Schema.optional(AgentStatus).annotations({
    description: "a transition of the lifecycle (409 when not allowed); the same status again changes nothing"
  }),
  lastActiveAt: Schema.optional(Timestamp).annotations({
    description: "ISO 8601; not in the future (a minute of clock skew is tolerated)"
  })
}).annotations({ identifier: "UpdateAgent", description: "a retired agent cannot be changed" })
export type UpdateAgent = typeof UpdateAgent.Type
