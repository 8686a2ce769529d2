import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { cursorFromString, pageQueryWith } from "../db/Paging.js"
import { Search } from "./Search.js"

/** Results page on (rank, kind, ref): the rank is recomputed identically for unchanged documents. */
const SearchCursor = cursorFromString(
  Schema.Struct({ rank: Schema.Number.pipe(Schema.finite()), kind: Schema.String.pipe(Schema.maxLength(64)), ref: Schema.String.pipe(Schema.maxLength(2048)) })
)
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
