import { Schema } from "effect"
import { Timestamp } from "../common/Schemas.js"

/** One entry of a lab's activity feed. */
export const Activity = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  kind: Schema.String.annotations({ description: "what happened: sync, experiment.created, paper.submitted, …" }),
  ref: Schema.NullOr(Schema.String).annotations({ description: "the id of the resource it happened to, if any" }),
  message: Schema.String,
  actor: Schema.String.annotations({ description: "who did it: a key or user id, or `sync`" }),
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  createdAt: Timestamp
}).annotations({ identifier: "Activity" })
export type Activity = typeof Activity.Type
