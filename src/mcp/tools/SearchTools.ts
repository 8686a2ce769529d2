import { Effect, Option, Schema } from "effect"
import { pageQueryWith } from "../../db/Paging.js"
import { Search } from "../../search/Search.js"
import { SearchCursor, SearchKind, SearchQuery, SearchResult } from "../../search/SearchResult.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"

const decodeCursor = Schema.decodeUnknownEither(SearchCursor)
const encodeCursor = Schema.encodeSync(SearchCursor)

/** The search tool: the lab's full-text search, as `GET /api/v1/search` serves it. */
export const searchTools = Effect.map(Search, (search) => [
  defineTool({
    name: "search",
    toolset: "search",
    access: "read",
    description:
      'Search the lab\'s files, tasks, papers, memories, knowledge and more by words ("a phrase", or, -excluded), best matches first. Use it to find where something is before reading it.',
    input: toolInput({ q: SearchQuery.fields.q, kinds: Schema.optional(Schema.Array(SearchKind).pipe(Schema.minItems(1))), ...ToolPage }),
    output: ToolPageOf(SearchResult),
    run: ({ q, kinds, limit, cursor }, call) =>
      Effect.gen(function* () {
        const query = yield* pageQueryWith(decodeCursor, { limit, cursor })
        const result = yield* search.search(call.labId, { q, kinds: Option.fromNullable(kinds), ...query })
        return { items: result.items, nextCursor: Option.getOrNull(Option.map(result.next, encodeCursor)) }
      })
  })
])
