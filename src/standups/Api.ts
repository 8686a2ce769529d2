import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { CreateStandup, Standup, StandupId, StandupQuery } from "./Standup.js"

/** GET and POST /standups are catalog routes; reading one standup is an extension. */
export class StandupsApi extends labResource("standups", {
  path: "/standups",
  params: Schema.Struct({ id: StandupId }),
  query: paged(StandupQuery.fields),
  item: Standup,
  create: CreateStandup,
  docs: {
    list: {
      summary: "List standups",
      description: "The lab's standups, newest first, filtered by day range and author."
    },
    create: {
      summary: "Post a standup",
      description: "Records the day's standup of a member or an agent. One per author and day: 409 when the author has one for that day, or when the authoring agent is retired. Standups are immutable."
    },
    get: {
      summary: "Get a standup",
      description: "Extension. One standup by id."
    }
  }
})
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(OpenApi.Description, "Daily standups of the lab's members and agents: one per author and day, immutable.") {}
