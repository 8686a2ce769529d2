import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Envelope } from "../http/Envelope.js"

export const Status = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  database: Schema.Literal("postgresql", "pglite"),
  uptimeSeconds: Schema.Number,
  time: Schema.String
}).annotations({ identifier: "Status" })

export class StatusApi extends HttpApiGroup.make("status")
  .add(HttpApiEndpoint.get("status", "/status").addSuccess(Envelope(Status)))
  .prefix("/api/v1") {}
