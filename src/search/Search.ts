import { Effect, Option } from "effect"
import type { LabId } from "../labs/LabId.js"
import type { SearchResult } from "./SearchResult.js"
import { SearchIndexer } from "./SearchIndexer.js"
import { type Row, type SearchCursor, SearchRepo, type SearchRequest, START, STOP } from "./SearchRepo.js"

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }

/** The headline as safe HTML: the text escaped, the matches in <mark>. */
export const snippetHtml = (headline: string): string =>
  headline
    .replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)
    .replaceAll(START, "<mark>")
    .replaceAll(STOP, "</mark>")

const toResult = (row: Row): SearchResult => ({
  kind: row.kind,
  ref: row.ref,
  title: row.title,
  snippet: snippetHtml(row.snippet.trim()),
  rank: row.rank
})

export class Search extends Effect.Service<Search>()("Search", {
  dependencies: [SearchRepo.Default, SearchIndexer.Default],
  effect: Effect.gen(function* () {
    const repo = yield* SearchRepo
    const indexer = yield* SearchIndexer

    /** Ranked matches, best first, paged on (rank, kind, ref). */
    const search = (labId: LabId, request: SearchRequest) =>
      Effect.map(Effect.zipRight(indexer.catchUp(labId), repo.search(labId, request)), (rows) => {
        const items = rows.slice(0, request.limit).map(toResult)
        const last = items.at(-1)
        return {
          items,
          next:
            rows.length > request.limit && last
              ? Option.some<SearchCursor>({ rank: last.rank, kind: last.kind, ref: last.ref })
              : Option.none<SearchCursor>()
        }
      })

    return { search }
  })
}) {}
