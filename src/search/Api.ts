import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ListEnvelope } from "../http/Envelope.js"
import { labGroup } from "../http/LabEndpoints.js"
import { SearchQuery, SearchResult } from "./SearchResult.js"

export class SearchApi extends HttpApiGroup.make("search")
  .add(
    HttpApiEndpoint.get("search", "/search")
      .setUrlParams(SearchQuery)
      .addSuccess(ListEnvelope(SearchResult).annotations({ description: "matches, most relevant first" }))
      .annotateContext(
        OpenApi.annotations({
          summary: "Search the lab",
          description:
            "Full-text search across the lab's files, papers, knowledge, memory, tasks and experiments (`kinds` narrows it), in web-search syntax (`\"a phrase\"`, `or`, `-word`), most relevant first, each result with a highlighted snippet. Use it to find by words; the lists filter by fields."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Full-text search across a lab's files, papers, knowledge, memory, tasks and experiments."
  ) {}
