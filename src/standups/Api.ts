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
  summaries: {
    list: "Standups, newest first, filtered by day range and author",
    create: "Post a standup (409 when the author has one for that day)",
    get: "One standup (extension)"
  }
})
  .pipe(labGroup)
  .addError(ConflictWire) {}
