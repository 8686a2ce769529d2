import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Authentication } from "../auth/Authentication.js"
import { ListEnvelope } from "../http/Envelope.js"
import { ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { SearchQuery, SearchResult } from "./SearchResult.js"

export class SearchApi extends HttpApiGroup.make("search")
  .add(
    HttpApiEndpoint.get("search", "/search")
      .setUrlParams(SearchQuery)
      .addSuccess(ListEnvelope(SearchResult).annotations({ description: "matches, most relevant first" }))
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
