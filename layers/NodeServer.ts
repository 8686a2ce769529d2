import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import type * as Http from "node:http"
import type { ListenOptions } from "node:net"
import type { Duplex } from "node:stream"
import { errorBody } from "../src/http/Errors.js"
import { newRequestId } from "../src/http/RequestContext.js"

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

/**
 * node answers a request it cannot parse itself (431 for a request line and
 * headers over its 16 KiB limit, 400 otherwise), with no body: answer those in
 * the error envelope too, then close the connection as node does.
 */
const onClientError = (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
  const body = JSON.stringify(
    error.code === "HPE_HEADER_OVERFLOW"
      ? errorBody("HeadersTooLarge", "the request line and headers (the URL included) exceed 16 KiB")
      : errorBody("BadRequest", "the request is not valid HTTP/1.1")
  )
  const status = error.code === "HPE_HEADER_OVERFLOW" ? "431 Request Header Fields Too Large" : "400 Bad Request"
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${newRequestId()}\r\nconnection: close\r\n\r\n${body}`
  )
}

/**
 * @effect/platform-node's server (NodeHttpServer.layer) on the node:http server
 * `evaluate` makes, with the gate above and errors node answers itself sent in
 * the envelope. The gate's shutdown runs before the server's own release
 * (finalizers run last first): node's close waits for the requests in flight,
 * `requestsMillis` at most.
 */
export const layer = (evaluate: () => Http.Server, options: ListenOptions, requestsMillis: number) =>
  Layer.suspend(() => {
    let shutDown = () => {}
    const guarded = () => {
      const server = evaluate()
      server.on("clientError", onClientError)
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
