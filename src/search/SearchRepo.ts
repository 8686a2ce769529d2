import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { SearchKind } from "./SearchResult.js"
import { CONFIG, type SearchKind as Kind } from "./Sql.js"

/**
 * A query matching more documents than this ranks the most recently updated
 * ones: ranking costs per document, and a term in most of a lab's documents
 * says little about relevance anyway. Narrower queries rank every match.
 */
export const MAX_RANKED = 1_000

/** The snippet is cut from this many characters of the body, starting a little before the first match. */
const WINDOW = 1_500
const WINDOW_LEAD = 200

/** Matches are wrapped in these (removed from the text first), then turned into <mark> by Search.ts. */
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

/** A query, the kinds of documents it looks in (all when None), and the page asked for. */
export interface SearchRequest {
  readonly q: string
  readonly kinds: Option.Option<ReadonlyArray<Kind>>
  readonly cursor: Option.Option<SearchCursor>
  readonly limit: number
}

export class SearchRepo extends Effect.Service<SearchRepo>()("SearchRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = sql.literal(`'${CONFIG}'`)

    /**
     * One statement: the candidates (the lab's matches, newest first, at most
     * MAX_RANKED, by their row ids), ranked with ts_rank_cd and paged on
     * (rank, kind, ref); then a headline for the page only, from a window of
     * the body around the first occurrence of a query word.
     */
    const search = (labId: string, { q, kinds, cursor, limit }: SearchRequest) =>
      Effect.gen(function* () {
        // the planner prices `tsv @@ query` on every row of a sequential scan far too low (each
        // evaluation detoasts a tsvector): the candidates always come through an index
        yield* sql`SET LOCAL enable_seqscan = off`
        return yield* sql`
          WITH q AS (SELECT websearch_to_tsquery(${config}, search_text(${q})) AS query),
          words AS (
            SELECT coalesce(array_agg(DISTINCT m[1]), '{}') AS list
            FROM q, regexp_matches(q.query::text, '''([^'']+)''', 'g') AS m
          )
          SELECT page.kind, page.ref, page.title, page.rank,
                 ts_headline(${config},
                   translate(substr(page.body, greatest(1, coalesce(page.at, 1) - ${WINDOW_LEAD}), ${WINDOW}), ${START + STOP}, ''),
                   q.query, ${HEADLINE_OPTIONS}) AS snippet
          FROM (
            SELECT ranked.*,
                   (SELECT min(nullif(strpos(lower(ranked.body), w), 0)) FROM words, unnest(words.list) AS w) AS at
            FROM (
              SELECT d.kind, d.ref, d.title, d.body, ts_rank_cd(d.tsv, q.query, ${NORMALIZATION})::float8 AS rank
              FROM search_documents d, q
              WHERE d.ctid = ANY (ARRAY(
                SELECT c.ctid FROM search_documents c
                WHERE c.lab_id = ${labId}
                  AND c.tsv @@ websearch_to_tsquery(${config}, search_text(${q}))
                  AND ${Option.match(kinds, { onNone: () => sql`TRUE`, onSome: (k) => sql`c.kind IN ${sql.in(k)}` })}
                ORDER BY c.updated_at DESC, c.kind, c.ref
                LIMIT ${MAX_RANKED}
              ))
            ) ranked
            WHERE ${Option.match(cursor, {
              onNone: () => sql`TRUE`,
              onSome: (c) =>
                sql`(ranked.rank < ${c.rank}::float8 OR (ranked.rank = ${c.rank}::float8 AND (ranked.kind, ranked.ref) > (${c.kind}, ${c.ref})))`
            })}
            ORDER BY ranked.rank DESC, ranked.kind, ranked.ref
            LIMIT ${limit + 1}
          ) page, q
          ORDER BY page.rank DESC, page.kind, page.ref`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row)))
        )
      }).pipe(sql.withTransaction)

    return { search: (labId: string, request: SearchRequest) => Effect.orDie(search(labId, request)) }
  })
}) {}
