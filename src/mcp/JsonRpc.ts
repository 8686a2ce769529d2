import { Either, Schema } from "effect"

/**
 * JSON-RPC 2.0 as MCP's streamable HTTP transport carries it: one message per POST (batches were dropped in
 * 2025-06-18). Errors of this layer are for malformed protocol messages only; a tool's failure is a result.
 */

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602

export const RequestId = Schema.Union(Schema.String.pipe(Schema.maxLength(256)), Schema.Number)
export type RequestId = typeof RequestId.Type

const Message = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(RequestId),
  method: Schema.String.pipe(Schema.maxLength(128)),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
const decodeMessage = Schema.decodeUnknownEither(Message)

/** A request (it has an id and is answered) or a notification (no id: answered 202 with no body). */
export type Incoming =
  | { readonly _tag: "Request"; readonly id: RequestId; readonly method: string; readonly params: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Notification"; readonly method: string }

export interface ProtocolError {
  readonly code: number
  readonly message: string
  readonly id: RequestId | null
}

const idOf = (json: unknown): RequestId | null => {
  if (typeof json !== "object" || json === null || !("id" in json)) return null
  return Either.getOrNull(Schema.decodeUnknownEither(RequestId)(json.id))
}

/** The message in a POST body, or the protocol error to answer with. */
export const parseMessage = (text: string): Either.Either<Incoming, ProtocolError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left({ code: PARSE_ERROR, message: "the body is not JSON", id: null })
  }
  if (Array.isArray(json)) {
    return Either.left({ code: INVALID_REQUEST, message: "batches are not supported: send one JSON-RPC message per request", id: null })
  }
  // a response or an error sent to the server: nothing asked for one (the server sends no requests)
  if (typeof json === "object" && json !== null && !("method" in json) && ("result" in json || "error" in json)) {
    return Either.left({ code: INVALID_REQUEST, message: "this server sends no requests: a response is not expected", id: idOf(json) })
  }
  return Either.match(decodeMessage(json), {
    onLeft: () =>
      Either.left({
        code: INVALID_REQUEST,
        message: 'not a JSON-RPC 2.0 request: {"jsonrpc":"2.0","id":…,"method":…,"params":{…}}',
        id: idOf(json)
      }),
    onRight: (message): Either.Either<Incoming, ProtocolError> =>
      message.id === undefined
        ? Either.right({ _tag: "Notification", method: message.method })
        : Either.right({ _tag: "Request", id: message.id, method: message.method, params: message.params ?? {} })
  })
}

export const result = (id: RequestId, value: unknown) => ({ jsonrpc: "2.0" as const, id, result: value })

export const error = (e: ProtocolError) => ({ jsonrpc: "2.0" as const, id: e.id, error: { code: e.code, message: e.message } })
