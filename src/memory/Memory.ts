import { Schema } from "effect"
import { Body, DateRange, LabRef, resourceId, Tags, Timestamp } from "../common/Schemas.js"

export const MemoryKind = Schema.Literal("observation", "fact", "plan", "reflection").annotations({
  description:
    "observation: something the agent saw; fact: something it holds true; plan: what it intends; reflection: what it concluded about its own work"
})
export type MemoryKind = typeof MemoryKind.Type

export const MAX_MEMORY_CHARS = 20_000

export const MemoryId = resourceId("MemoryId", "mem")
export type MemoryId = typeof MemoryId.Type

export const MemoryEntry = Schema.Struct({
  id: MemoryId,
  labId: Schema.String,
  agentId: Schema.String.annotations({ description: "the agent whose memory this is" }),
  kind: MemoryKind,
  content: Schema.String,
  tags: Schema.Array(Schema.String),
  importance: Schema.Number.annotations({ description: "0 (trivia) to 1 (essential)" }),
  createdAt: Timestamp
}).annotations({ identifier: "MemoryEntry", description: "immutable once recorded: delete and record again" })
export type MemoryEntry = typeof MemoryEntry.Type

export const MemoryContent = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be empty"),
  Schema.maxLength(MAX_MEMORY_CHARS)
).annotations({ description: `text, at most ${MAX_MEMORY_CHARS} characters` })

export const Importance = Schema.Number.pipe(
  Schema.between(0, 1, { message: () => "must be a number from 0 to 1" })
).annotations({ description: "0 to 1, default 0.5" })

export const CreateMemory = Body({
  labId: LabRef,
  agentId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
    description: "an agent of the lab that is not retired"
  }),
  kind: MemoryKind,
  content: MemoryContent,
  tags: Schema.optionalWith(Tags, { default: () => [] }),
  importance: Schema.optionalWith(Importance, { default: () => 0.5 })
}).annotations({ identifier: "CreateMemory" })
export type CreateMemory = typeof CreateMemory.Type

export const MemoryQuery = Schema.Struct({
  labId: LabRef,
  agentId: Schema.optional(Schema.String.pipe(Schema.maxLength(64))).annotations({ description: "only this agent's entries" }),
  kind: Schema.optional(MemoryKind),
  tag: Schema.optional(Schema.String.pipe(Schema.maxLength(64))).annotations({ description: "only entries with this tag" }),
  ...DateRange
})
