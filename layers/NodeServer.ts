import {
  Cookies,
  type Headers,
  type HttpApp,
  type HttpMiddleware,
  HttpIncomingMessage,
  HttpServer,
  HttpServerError,
  HttpServerRequest,
  type HttpServerResponse,
  type Multipart,
  UrlParams
} from "@effect/platform"
import { NodeHttpServer, NodeMultipart, NodeStream } from "@effect/platform-node"
import { Cause, Chunk, Effect, Inspectable, Layer, Option, Runtime, Scope, Stream } from "effect"
import type * as Http from "node:http"
import type { ListenOptions } from "node:net"
import { type Duplex, Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { errorBody } from "../src/http/Errors.js"
import { newRequestId } from "../src/http/RequestContext.js"

/**
 * node:http's request as an HttpServerRequest, as @effect/platform-node makes
 * it (whose class is internal to that package): the body is read on demand,
 * once, and `source` is the IncomingMessage (NodeHttpServerRequest.toIncomingMessage).
 */
class NodeRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId

  constructor(
    readonly source: Http.IncomingMessage,
    readonly response: Http.ServerResponse,
    readonly url: string = source.url ?? "/",
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string
  ) {
    super()
  }

  private readonly onError = (cause: unknown): HttpServerError.RequestError => new HttpServerError.RequestError({ request: this, reason: "Decode", cause })

  get originalUrl() {
    return this.source.url ?? "/"
  }
  get method() {
    // node hands over whatever method the client sent, as platform-node's request does
    return (this.source.method ?? "GET").toUpperCase() as HttpServerRequest.HttpServerRequest["method"]
  }
  get headers(): Headers.Headers {
    // node's header record is what platform-node hands out as Headers too
    return this.headersOverride ?? (this.source.headers as Headers.Headers)
  }
  get remoteAddress() {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }
  private cachedCookies: Record<string, string> | undefined
  get cookies() {
    return (this.cachedCookies ??= Cookies.parseHeader(this.headers["cookie"] ?? ""))
  }

  private textEffect: Effect.Effect<string, HttpServerError.RequestError> | undefined
  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return (this.textEffect ??= Effect.runSync(
      Effect.cached(
        Effect.flatMap(HttpIncomingMessage.MaxBodySize, (maxBodySize): Effect.Effect<string, HttpServerError.RequestError> =>
          NodeStream.toString(() => this.source, { onFailure: this.onError, maxBytes: Option.getOrUndefined(maxBodySize) })
        )
      )
    ))
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.tryMap(this.text, { try: (text: string): unknown => (text === "" ? null : JSON.parse(text)), catch: this.onError })
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text: string) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: this.onError })
    )
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.flatMap(HttpIncomingMessage.MaxBodySize, (maxBodySize): Effect.Effect<Uint8Array, HttpServerError.RequestError> =>
      NodeStream.toUint8Array(() => this.source, { onFailure: this.onError, maxBytes: Option.getOrUndefined(maxBodySize) })
    ).pipe(Effect.map((bytes: Uint8Array) => new Uint8Array(bytes).buffer))
  }
  get stream() {
    return NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(() => this.source, this.onError)
  }
  private multipartEffect: HttpServerRequest.HttpServerRequest["multipart"] | undefined
  get multipart() {
    return (this.multipartEffect ??= Effect.runSync(Effect.cached(NodeMultipart.persisted(this.source, this.source.headers))))
  }
  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return NodeMultipart.stream(this.source, this.source.headers)
  }
  get upgrade(): HttpServerRequest.HttpServerRequest["upgrade"] {
    return Effect.fail(new HttpServerError.RequestError({ request: this, reason: "Decode", description: "not an upgradeable ServerRequest" }))
  }
  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }) {
    return new NodeRequest(
      this.source,
      this.response,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride
    )
  }
  override toString() {
    return `ServerRequest(${this.method} ${this.url})`
  }
  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl })
  }
}

/** A response that failed while it was being written ends there, as platform-node ends it. */
const failed =
  (res: Http.ServerResponse, original: HttpServerResponse.HttpServerResponse) => (failure: Cause.Cause<unknown>) =>
    Effect.flatMap(HttpServerError.causeResponse(failure), ([response, cause]) => {
      const headersSent = res.headersSent
      if (!headersSent) res.writeHead(response.status)
      if (!res.writableEnded) res.end()
      return Effect.failCause(headersSent ? Cause.sequential(failure, Cause.die(original)) : cause)
    })

/** Write a response to node's ServerResponse; bodies in memory are written at once. */
const send = (
  request: NodeRequest,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<void, unknown> => {
  const res = request.response
  if (res.writableEnded) return Effect.void
  let headers: Http.OutgoingHttpHeaders = response.headers
  if (!Cookies.isEmpty(response.cookies)) {
    const cookies = Cookies.toSetCookieHeaders(response.cookies)
    const existing = headers["set-cookie"]
    headers = { ...headers, "set-cookie": existing === undefined ? cookies : cookies.concat(existing) }
  }
  const body = response.body
  if (request.method === "HEAD" || body._tag === "Empty") {
    res.writeHead(response.status, headers)
    res.end()
    return Effect.void
  }
  const fail = (cause: unknown) => new HttpServerError.ResponseError({ request, response, reason: "Decode", cause })
  switch (body._tag) {
    case "Uint8Array":
      res.writeHead(response.status, headers)
      res.end(body.body)
      return Effect.void
    case "Raw": {
      res.writeHead(response.status, headers)
      const raw: unknown = body.body
      if (raw instanceof Readable) {
        return Effect.tryPromise({ try: (signal) => pipeline(raw, res, { signal, end: true }), catch: fail }).pipe(
          Effect.interruptible,
          Effect.tapErrorCause(failed(res, response))
        )
      }
      res.end(raw)
      return Effect.void
    }
    case "FormData":
      return Effect.suspend(() => {
        const web = new Response(body.formData)
        res.writeHead(response.status, { ...headers, ...Object.fromEntries(web.headers) })
        const stream = web.body
        if (stream === null) return Effect.sync(() => void res.end())
        return Effect.tryPromise({ try: (signal) => pipeline(Readable.fromWeb(stream), res, { signal }), catch: fail })
      }).pipe(Effect.interruptible, Effect.tapErrorCause(failed(res, response)))
    case "Stream": {
      res.writeHead(response.status, headers)
      const drained = Effect.unsafeMakeLatch()
      res.on("drain", () => drained.unsafeOpen())
      return body.stream.pipe(
        Stream.orDie,
        Stream.runForEachChunk((chunk) => {
          let full = false
          for (const bytes of Chunk.toReadonlyArray(chunk)) full = !res.write(bytes)
          if (!full) return Effect.void
          drained.unsafeClose()
          return drained.await
        }),
        Effect.interruptible,
        Effect.matchCauseEffect({ onSuccess: () => Effect.sync(() => void res.end()), onFailure: failed(res, response) })
      )
    }
  }
}

/**
 * Serve an app on a node:http server: each request runs in one fiber, with its
 * own Scope, and its response is written when the app answers. What it leaves
 * out of @effect/platform-node's server is per-request machinery this service
 * does not use (the request span, pre-response handlers, WebSocket upgrades).
 * Tracing is off in this service (layers/App.ts); whoever turns a tracer on
 * gets no HTTP request spans from this server and should add them here.
 */
const serveOn = (gate: Gate) => (httpApp: HttpApp.Default<unknown>, middleware?: HttpMiddleware.HttpMiddleware) =>
  Effect.gen(function* () {
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const app: HttpApp.Default<unknown> = middleware ? middleware(httpApp) : httpApp
    const respond = (request: NodeRequest) =>
      Effect.matchCauseEffect(app, {
        onSuccess: (response) => send(request, response),
        onFailure: (cause) =>
          Effect.flatMap(HttpServerError.causeResponse(cause), ([response, rest]) =>
            Effect.zipRight(send(request, response), Cause.isEmptyType(rest) ? Effect.void : Effect.failCause(rest))
          )
      })
    const handler = (source: Http.IncomingMessage, response: Http.ServerResponse) => {
      const request = new NodeRequest(source, response)
      const fiber = runFork(
        Effect.uninterruptible(
          Effect.flatMap(Scope.make(), (scope) =>
            Effect.onExit(
              Scope.extend(Effect.provideService(respond(request), HttpServerRequest.HttpServerRequest, request), scope),
              (exit) => Scope.close(scope, exit)
            )
          )
        )
      )
      response.on("close", () => {
        if (!response.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
      })
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => gate.close(handler)))
    gate.open(handler)
  })

type Handler = (source: Http.IncomingMessage, response: Http.ServerResponse) => void

interface Gate {
  /** Serve with `handler` from now on, starting with the requests that waited. */
  readonly open: (handler: Handler) => void
  /** Stop serving with `handler`: later requests get 503. */
  readonly close: (handler: Handler) => void
  /** The server is closing: requests still waiting for an app that never came get 503, later ones too. */
  readonly shutDown: () => void
}

/**
 * The port opens before the app is served (the app is built on the server's
 * layer), and node drops a request no listener takes: it would hang until its
 * socket timed out (and kept the server from closing). Requests that come
 * before the app is served wait for it; those after it stopped, or still
 * waiting when the server closes (a start that failed), get 503.
 */
type GateState =
  | { readonly _tag: "waiting"; readonly queue: Array<readonly [Http.IncomingMessage, Http.ServerResponse]> }
  | { readonly _tag: "serving"; readonly handler: Handler }
  | { readonly _tag: "closed" }

const gateOf = (server: Http.Server): Gate => {
  let state: GateState = { _tag: "waiting", queue: [] }
  const unavailable = (response: Http.ServerResponse) => {
    response.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1", "x-request-id": newRequestId() })
    response.end(UNAVAILABLE_BODY)
  }
  server.on("request", (source, response) => {
    if (state._tag === "serving") state.handler(source, response)
    else if (state._tag === "waiting") state.queue.push([source, response])
    else unavailable(response)
  })
  return {
    open: (handler) => {
      const waited = state._tag === "waiting" ? state.queue : []
      state = { _tag: "serving", handler }
      for (const [source, response] of waited) handler(source, response)
    },
    close: (handler) => {
      if (state._tag === "serving" && state.handler === handler) state = { _tag: "closed" }
    },
    shutDown: () => {
      const waited = state._tag === "waiting" ? state.queue : []
      state = { _tag: "closed" }
      for (const [, response] of waited) unavailable(response)
    }
  }
}

const UNAVAILABLE_BODY = JSON.stringify(errorBody("ServiceUnavailable", "The service is shutting down; retry shortly."))

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

const make = (evaluate: () => Http.Server, options: ListenOptions) =>
  Effect.gen(function* () {
    const server = yield* Effect.acquireRelease(Effect.sync(evaluate), (server) =>
      Effect.async<void>((resume) => {
        if (!server.listening) return resume(Effect.void)
        server.close((error) => resume(error ? Effect.die(error) : Effect.void))
      })
    )
    const gate = gateOf(server)
    server.on("clientError", onClientError)
    // before the server's own release (finalizers run last first): close waits for every open request
    yield* Effect.addFinalizer(() => Effect.sync(gate.shutDown))
    yield* Effect.async<void, HttpServerError.ServeError>((resume) => {
      const onError = (cause: unknown) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
      server.on("error", onError)
      server.listen(options, () => {
        server.off("error", onError)
        resume(Effect.void)
      })
    })
    const address = server.address()
    return HttpServer.make({
      address:
        typeof address === "string" || address === null
          ? { _tag: "UnixAddress", path: address ?? "" }
          : { _tag: "TcpAddress", hostname: address.address === "::" ? "0.0.0.0" : address.address, port: address.port },
      serve: serveOn(gate)
    })
  })

/** The HttpServer on node:http, with the platform services (files, paths, etags) as NodeHttpServer.layer provides them. */
export const layer = (evaluate: () => Http.Server, options: ListenOptions) =>
  Layer.mergeAll(Layer.scoped(HttpServer.HttpServer, make(evaluate, options)), NodeHttpServer.layerContext)
