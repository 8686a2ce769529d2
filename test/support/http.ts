import { Schema } from "effect"
import { expect } from "vitest"

/** Read a response as JSON and check the envelope every response carries. */
export const json = async (response: Response): Promise<unknown> => {
  const body: unknown = await response.json()
  expect(response.headers.get("x-request-id")).toMatch(/^req_[A-Za-z0-9_-]+$/)
  expect(response.headers.get("x-ratelimit-limit")).toMatch(/^\d+$/)
  expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
  expect(response.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/)
  return body
}

/** Expect the error envelope with this status and code. */
export const expectError = async (response: Response, status: number, code: string) => {
  const body = Schema.decodeUnknownSync(ErrorBody)(await json(response))
  expect({ status: response.status, body }).toMatchObject({ status, body: { error: { code, status } } })
  return body.error.message
}

/** Exactly `{error:{code, message, status}}`, nothing more. */
const ErrorBody = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, status: Schema.Number })
}).annotations({ parseOptions: { onExcessProperty: "error" } })

/** Decode a success envelope's data with the contract's schema. */
export const data = async <A, I>(response: Response, schema: Schema.Schema<A, I>, status = 200): Promise<A> => {
  const body = await json(response)
  expect(response.status, JSON.stringify(body)).toBe(status)
  const envelope = Schema.decodeUnknownSync(
    Schema.Struct({ data: schema, meta: Schema.Struct({ request_id: Schema.String, timestamp: Schema.String }) })
  )(body)
  expect(envelope.meta.request_id).toBe(response.headers.get("x-request-id"))
  expect(new Date(envelope.meta.timestamp).toISOString()).toBe(envelope.meta.timestamp)
  return envelope.data
}

/** Decode one page of a list. */
export const page = async <A, I>(response: Response, item: Schema.Schema<A, I>) => {
  const body = await json(response)
  expect(response.status, JSON.stringify(body)).toBe(200)
  return Schema.decodeUnknownSync(
    Schema.Struct({
      data: Schema.Array(item),
      meta: Schema.Struct({
        request_id: Schema.String,
        timestamp: Schema.String,
        next_cursor: Schema.NullOr(Schema.String),
        has_more: Schema.Boolean
      })
    })
  )(body)
}

export { type RequestOptions, requestAt } from "./Requests.js"
