import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { createIn, getById, labGroup, listOf, paged } from "../http/LabEndpoints.js"
import { CreateStandup, Standup, StandupId, StandupQuery } from "./Standup.js"

/** GET and POST /standups are catalog routes; reading one standup is an extension. */
export class StandupsApi extends HttpApiGroup.make("standups")
  .add(
    listOf("/standups", paged(StandupQuery.fields), Standup).annotate(
      OpenApi.Summary,
      "Standups, newest first, filtered by day range and author"
    )
  )
  .add(
    createIn("/standups", CreateStandup, Standup).annotate(
      OpenApi.Summary,
      "Post a standup (409 when the author has one for that day)"
    )
  )
  .add(getById("/standups/:id", Schema.Struct({ id: StandupId }), Standup).annotate(OpenApi.Summary, "One standup (extension)"))
  .pipe(labGroup)
  .addError(ConflictWire) {}
