import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { ListEnvelope } from "../http/Envelope.js"
import { labGroup } from "../http/LabEndpoints.js"
import { SearchQuery, SearchResult } from "./SearchResult.js"

export class SearchApi extends HttpApiGroup.make("search")
  .add(
    HttpApiEndpoint.get("search", "/search")
      .setUrlParams(SearchQuery)
      .addSuccess(ListEnvelope(SearchResult).annotations({ description: "matches, most relevant first" }))
  )
  .pipe(labGroup) {}
