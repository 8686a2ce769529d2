import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, FiberRef, Schema } from "effect"
import type { Page } from "../db/Paging.js"
import { CurrentRequest, type RequestContext } from "../common/RequestContext.js"
import { isoString } from "../common/IsoTime.js"

/** Spec 2.2: every success is `{data, meta}`; lists add the cursor fields. */
export const Meta = Schema.Struct({
  request_id: Schema.String.annotations({ description: "req_<id>, also sent as X-Request-Id" }),
  timestamp: Schema.String.annotations({ description: "ISO 8601 UTC" })
}).annotations({ identifier: "Meta" })

export const ListMeta = Schema.Struct({
  ...Meta.fields,
  next_cursor: Schema.NullOr(Schema.String).annotations({ description: "pass as `cursor` to get the next page; null on the last page" }),
  has_more: Schema.Boolean
}).annotations({ identifier: "ListMeta" })

export const Envelope = <S extends Schema.Schema.Any>(data: S) => Schema.Struct({ data, meta: Meta })

export const ListEnvelope = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), meta: ListMeta })

const meta = (request: RequestContext) => ({ request_id: request.id, timestamp: isoString(new Date()) })

/** Wrap a handler's result in the success envelope. */
export const ok = <A>(data: A) => Effect.map(FiberRef.get(CurrentRequest), (request) => ({ data, meta: meta(request) }))



/** Wrap one page of a list in the list envelope. */
export const okPage = <A>(page: Page<A>) =>
  Effect.map(FiberRef.get(CurrentRequest), (request) => ({
    data: page.items,
    meta: { ...meta(request), next_cursor: page.nextCursor, has_more: page.nextCursor !== null }
  }))

/**
 * A response with a status the handler chooses among those the contract
 * declares for the same body (201 created vs 200 replaced, 202 queued vs 200).
 */
export const respondWith = <A, I>(schema: Schema.Schema<A, I>, value: A, status: number) =>
  Schema.encode(schema)(value).pipe(
    Effect.flatMap((body) => HttpServerResponse.json(body, { status })),
    Effect.orDie
  )
