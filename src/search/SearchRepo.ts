import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { SearchKind } from "./SearchResult.js"
import { CONFIG, type SearchKind as Kind } from "./Sql.js"

/** Characters of a body ts_headline reads: snippets come from the start of long files. */
const HEADLINE_CHARS = 20_000

/** Matches are wrapped in these (never in stored text: they are removed first), then turned into <mark> by Search.ts. */
export const START = "\u0001"
export const STOP = "\u0002"
const HEADLINE_OPTIONS = `StartSel=${START}, StopSel=${STOP}, MaxWords=35, MinWords=15`

/** ts_rank_cd normalisation: 1 divides by 1 + log(length), 32 maps the rank into [0, 1). */
const NORMALIZATION = 1 | 32

const Row = Schema.Struct({
  kind: SearchKind,
  ref: Schema.String,
  title: Schema.String,
  snippet: Schema.String,
  rank: Schema.Number
})
export type Row = typeof Row.Type

/** Where a page starts: after this (rank, kind, ref), in rank order. */
export interface SearchCursor {
  readonly rank: number
  readonly kind: string
  readonly ref: string
}

export class SearchRepo extends Effect.Service<SearchRepo>()("SearchRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = sql.literal(`'${CONFIG}'`)

    const search = (
      labId: string,
      q: string,
      kinds: Option.Option<ReadonlyArray<Kind>>,
      cursor: Option.Option<SearchCursor>,
      limit: number
    ) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          WITH q AS (SELECT websearch_to_tsquery(${config}, ${q}) AS query)
          SELECT page.kind, page.ref, page.title, page.rank,
                 ts_headline(${config}, translate(left(page.body, ${HEADLINE_CHARS}), ${START + STOP}, ''), q.query, ${HEADLINE_OPTIONS}) AS snippet
          FROM (
            SELECT * FROM (
              SELECT d.kind, d.ref, d.title, d.body, ts_rank_cd(d.tsv, q.query, ${NORMALIZATION})::float8 AS rank
              FROM search_documents d, q
              WHERE d.lab_id = ${labId} AND d.tsv @@ q.query
                AND ${Option.match(kinds, { onNone: () => sql`TRUE`, onSome: (k) => sql`d.kind IN ${sql.in(k)}` })}
            ) ranked
            WHERE ${Option.match(cursor, {
              onNone: () => sql`TRUE`,
              onSome: (c) =>
                sql`(ranked.rank < ${c.rank}::float8 OR (ranked.rank = ${c.rank}::float8 AND (ranked.kind, ranked.ref) > (${c.kind}, ${c.ref})))`
            })}
            ORDER BY ranked.rank DESC, ranked.kind, ranked.ref
            LIMIT ${limit + 1}
          ) page, q
          ORDER BY page.rank DESC, page.kind, page.ref`
        return yield* Schema.decodeUnknown(Schema.Array(Row))(rows)
      })

    return {
      search: (
        labId: string,
        q: string,
        kinds: Option.Option<ReadonlyArray<Kind>>,
        cursor: Option.Option<SearchCursor>,
        limit: number
      ) => Effect.orDie(search(labId, q, kinds, cursor, limit))
    }
  })
}) {}
