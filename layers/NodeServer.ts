import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import type * as Http from "node:http"
import type { ListenOptions } from "node:net"
import type { Duplex } from "node:stream"
import { errorBody } from "../src/http/Errors.js"
import { newRequestId } from "../src/common/RequestContext.js"
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, limitConnections } from "./ConnectionLimits.js"

type Handler = (source: Http.IncomingMessage, response: Http.ServerResponse) => void

const UNAVAILABLE_BODY = JSON.stringify(errorBody("ServiceUnavailable", "The service is shutting down; retry shortly."))

const unavailable = (response: Http.ServerResponse) => {
  response.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1", "x-request-id": newRequestId() })
  response.end(UNAVAILABLE_BODY)
}

/**
 * The port opens before the app is served (the app is built on the server's
 * layer), and node drops a request no listener takes: it would hang until its
 * socket timed out (and kept the server from closing). The gate is node's
 * first "request" listener and acts only while it is the sole one, that is
 * while @effect/platform-node's handler is not registered: requests that come
 * before the app is served wait for it; those after it stopped, or still
 * waiting when the server closes (a start that failed), get 503.
 */
const gateOf = (server: Http.Server) => {
  let waiting: Array<readonly [Http.IncomingMessage, Http.ServerResponse]> | undefined = []
  const gate: Handler = (source, response) => {
    if (server.listenerCount("request") > 1) return
    if (waiting !== undefined) waiting.push([source, response])
    else unavailable(response)
  }
  server.on("request", gate)
  server.on("newListener", (event: string | symbol, listener: Handler) => {
    if (event !== "request" || listener === gate || waiting === undefined) return
    const waited = waiting
    waiting = undefined
    queueMicrotask(() => waited.forEach(([source, response]) => listener(source, response)))
  })
  /** The server is closing: requests still waiting for an app that never came get 503, later ones too. */
  return () => {
    const waited = waiting ?? []
    waiting = undefined
    for (const [, response] of waited) unavailable(response)
  }
}

/** A client that does not read its answer does not keep the connection: it is closed this long after the answer. */
const CLOSE_AFTER_ANSWER_MILLIS = 1_000

/** 408, which is not an error the API itself answers: only node, for a request not in by its deadline. */
const requestTimeoutBody = (limits: ConnectionLimits) =>
  JSON.stringify({
    error: {
      code: "request_timeout",
      message: `the request was not received in time: headers within ${limits.headersMillis} ms, the whole request within ${limits.requestMillis} ms`,
      status: 408
    }
  })

/**
 * node answers a request it cannot parse itself (431 for a request line and
 * headers over its 16 KiB limit, 400 otherwise) and one not received by its
 * deadline (408), with no body: answer those in the error envelope too, then
 * close the connection as node does.
 */
const onClientError = (limits: ConnectionLimits) => (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
  const [status, body] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? ["431 Request Header Fields Too Large", JSON.stringify(errorBody("HeadersTooLarge", "the request line and headers (the URL included) exceed 16 KiB"))]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? ["408 Request Timeout", requestTimeoutBody(limits)]
        : ["400 Bad Request", JSON.stringify(errorBody("BadRequest", "the request is not valid HTTP/1.1"))]
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${newRequestId()}\r\nconnection: close\r\n\r\n${body}`,
    () => socket.destroy()
  )
  setTimeout(() => socket.destroy(), CLOSE_AFTER_ANSWER_MILLIS).unref()
}

/**
 * @effect/platform-node's server (NodeHttpServer.layer) on the node:http server
 * `evaluate` makes, with the gate above, errors node answers itself sent in
 * the envelope, and the connection caps of `limits` (its deadlines are the
 * server's options: ConnectionLimits.serverOptions). The gate's shutdown runs
 * before the server's own release (finalizers run last first): node's close
 * waits for the requests in flight, `requestsMillis` at most.
 */
export const layer = (
  evaluate: () => Http.Server,
  options: ListenOptions,
  requestsMillis: number,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS
) =>
  Layer.suspend(() => {
    let shutDown = () => {}
    const guarded = () => {
      const server = evaluate()
      limitConnections(server, limits)
      server.on("clientError", onClientError(limits))
      const closeGate = gateOf(server)
      shutDown = () => {
        closeGate()
        // node's close waits for every request in flight: past the bound, their connections are closed
        setTimeout(() => server.closeAllConnections(), requestsMillis).unref()
      }
      return server
    }
    return Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => shutDown()))).pipe(
      Layer.provideMerge(NodeHttpServer.layer(guarded, options))
    )
  })
