import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQueryWith } from "../db/Paging.js"
import { Search } from "./Search.js"
import { SearchCursor } from "./SearchResult.js"

const decodeCursor = Schema.decodeUnknownEither(SearchCursor)
const encodeCursor = Schema.encodeSync(SearchCursor)

export const SearchHttp = HttpApiBuilder.group(Api, "search", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const search = yield* Search
    return handlers.handle("search", ({ urlParams: { labId, q, kinds, ...page } }) =>
      lab.read(labId, (scope) =>
        Effect.gen(function* () {
          const query = yield* pageQueryWith(decodeCursor, page)
          const result = yield* search.search(scope.labId, { q, kinds: Option.fromNullable(kinds), ...query })
          return yield* okPage({ items: result.items, nextCursor: Option.getOrNull(Option.map(result.next, encodeCursor)) })
        })
      )
    )
  })
)
