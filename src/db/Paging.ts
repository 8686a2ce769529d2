import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Option, Schema } from "effect"
import { InvalidField } from "../common/DomainErrors.js"
import { ResourceId, Timestamp } from "../common/Schemas.js"
import { jsonProblem } from "../common/TextHygiene.js"
import { isoString } from "../common/IsoTime.js"

/** One page of a list, and the cursor of the next (null on the last page). */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/**
 * Keyset pagination shared by every list: newest first, ordered by
 * (created_at, id), so rows inserted during a walk neither shift nor repeat
 * the rows already seen. The cursor is the opaque position of the last row.
 */
export const Cursor = Schema.Struct({ createdAt: Timestamp, id: ResourceId })
export type Cursor = typeof Cursor.Type

/**
 * JSON a client sent inside a cursor: the request's own check (src/http/InputCheck.ts)
 * cannot see into base64, so a NUL, a lone surrogate or deep nesting is refused here.
 */
const CleanJson = Schema.parseJson().pipe(Schema.filter((json) => jsonProblem(json) === undefined))

/** An opaque cursor: the position, as base64url JSON. */
export const cursorFromString = <A, I>(position: Schema.Schema<A, I>) =>
  Schema.compose(Schema.StringFromBase64Url, Schema.compose(CleanJson, position, { strict: false })).annotations({
    message: () => ({ message: "is not a cursor issued by this service", override: true }),
    description: "opaque: meta.next_cursor of the previous page"
  })

const CursorFromString = cursorFromString(Cursor)

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100

export const Limit = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.between(1, MAX_LIMIT)
).annotations({
  description: `page size, default ${DEFAULT_LIMIT}, max ${MAX_LIMIT}`,
  // a URL parameter travels as text, but the contract's clients send an integer
  jsonSchema: { type: "integer", minimum: 1, maximum: MAX_LIMIT, description: `page size, default ${DEFAULT_LIMIT}, max ${MAX_LIMIT}` },
  message: () => ({ message: `must be an integer from 1 to ${MAX_LIMIT}`, override: true })
})

/**
 * Query fields every list accepts; spread into a list endpoint's urlParams.
 * The cursor stays a string in the contract, so clients pass back
 * `meta.next_cursor` as it came; `pageQuery` decodes it.
 */
export const PageParams = {
  limit: Schema.optional(Limit),
  cursor: Schema.optional(
    Schema.String.pipe(Schema.maxLength(2048)).annotations({ description: "opaque: meta.next_cursor of the previous page" })
  )
}

export interface PageQuery {
  readonly limit: number
  readonly cursor: Option.Option<Cursor>
}

const decodeCursor = Schema.decodeUnknownEither(CursorFromString)

/** The page a list request asks for; InvalidField (422) for a cursor this service did not issue. */
export const pageQuery = (params: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
  pageQueryWith(decodeCursor, params)

/** As pageQuery, for lists ordered by another position (files: by path). */
export const pageQueryWith = <P>(
  decode: (u: unknown) => Either.Either<P, unknown>,
  params: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
): Effect.Effect<{ readonly limit: number; readonly cursor: Option.Option<P> }, InvalidField> => {
  const limit = params.limit ?? DEFAULT_LIMIT
  if (params.cursor === undefined) return Effect.succeed({ limit, cursor: Option.none() })
  return Either.match(decode(params.cursor), {
    onLeft: () => Effect.fail(new InvalidField({ field: "cursor", problem: "is not a cursor issued by this service" })),
    onRight: (cursor) => Effect.succeed({ limit, cursor: Option.some(cursor) })
  })
}

/**
 * A cursor as CursorFromString encodes it (base64url of the JSON position),
 * written directly: every list page ends with one, and the service is the only
 * writer. Coming back it is decoded with the schema.
 */
const encodeCursor = (position: Cursor): string =>
  Buffer.from(JSON.stringify({ createdAt: isoString(position.createdAt), id: position.id })).toString("base64url")

/** The SQL condition that starts a page after the cursor (TRUE on the first page). */
export const keyset = (sql: SqlClient.SqlClient, cursor: Option.Option<Cursor>, table?: string) => {
  if (Option.isNone(cursor)) return sql`TRUE`
  const prefix = table ? `${table}.` : ""
  return sql`(${sql.literal(`${prefix}created_at`)}, ${sql.literal(`${prefix}id`)}) < (${cursor.value.createdAt.toISOString()}::timestamptz, ${cursor.value.id})`
}

/** Cut `limit + 1` fetched rows into one page and the cursor of the next. */
export const pageOf = <A extends { readonly createdAt: Date; readonly id: string }>(
  rows: ReadonlyArray<A>,
  limit: number
): Page<A> => {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return {
    items,
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null
  }
}
