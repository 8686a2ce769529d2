import { Schema } from "effect"
import { LabRef } from "../common/Schemas.js"
import { cursorFromString, PageParams } from "../db/Paging.js"
import { SearchKinds } from "./Sql.js"

export const SearchKind = Schema.Literal(...SearchKinds)

/** `kinds=files,papers`: a comma-separated subset of the kinds. */
export const KindList = Schema.compose(
  Schema.split(","),
  Schema.Array(Schema.Trim.pipe(Schema.compose(SearchKind))).pipe(Schema.minItems(1))
).annotations({ description: `comma-separated: ${SearchKinds.join(", ")} (default: all)` })

export const SearchResult = Schema.Struct({
  kind: SearchKind,
  ref: Schema.String.annotations({ description: "the record's id; for files, its path" }),
  title: Schema.String.annotations({ description: "the title, name or path (a memory's first line)" }),
  snippet: Schema.String.annotations({
    description: "HTML-escaped text around the first match (15 to 35 words), each match in <mark>…</mark>"
  }),
  rank: Schema.Number.annotations({ description: "relevance in [0, 1): cover density, title words weigh most" })
}).annotations({ identifier: "SearchResult" })
export type SearchResult = typeof SearchResult.Type

/** Results page on (rank, kind, ref): the rank is recomputed identically for unchanged documents. */
export const SearchCursor = cursorFromString(
  Schema.Struct({ rank: Schema.Number.pipe(Schema.finite()), kind: Schema.String.pipe(Schema.maxLength(64)), ref: Schema.String.pipe(Schema.maxLength(2048)) })
)

export const SearchQuery = Schema.Struct({
  labId: LabRef,
  q: Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(500)).annotations({
    description: 'web-search syntax: words (all must match), "a phrase", or, -excluded'
  }),
  kinds: Schema.optional(KindList),
  ...PageParams
})
