/**
 * Fronts placed between the TypeScript client and the real server to make what
 * a network does to a client: an HTTP front that answers some requests itself
 * (a 429 with Retry-After, a 503, silence) and passes the rest on, and a TCP
 * proxy that drops a connection after the server has taken the request.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { connect, createServer, type Server, type Socket } from "node:net"

export interface SeenRequest {
  readonly at: number
  readonly method: string
  readonly url: string
  readonly idempotencyKey: string | undefined
}

/** What the front does with the n-th request (0-based): answer it itself, hang, or pass it on. */
export type FrontAction =
  | { readonly kind: "answer"; readonly status: number; readonly headers?: Record<string, string>; readonly body: unknown }
  | { readonly kind: "hang" }
  | { readonly kind: "pass" }

export interface Front {
  readonly baseUrl: string
  readonly seen: ReadonlyArray<SeenRequest>
  readonly close: () => Promise<void>
}

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  )

const closeServer = (server: Server, sockets: Set<Socket>) =>
  new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy()
    server.close(() => resolve())
  })

const track = (server: Server) => {
  const sockets = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  })
  return sockets
}

export const startFront = async (target: string, plan: (index: number) => FrontAction): Promise<Front> => {
  const seen: Array<SeenRequest> = []
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const header = request.headers["idempotency-key"]
    const index = seen.length
    seen.push({ at: Date.now(), method: request.method ?? "", url: request.url ?? "", idempotencyKey: typeof header === "string" ? header : undefined })
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const action = plan(index)
    if (action.kind === "hang") return
    if (action.kind === "answer") {
      response.writeHead(action.status, { "content-type": "application/json", "x-request-id": `req_front${index}`, ...action.headers })
      response.end(JSON.stringify(action.body))
      return
    }
    const headers = new Headers()
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "connection") headers.set(name, value)
    }
    const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
    const upstream = await fetch(`${target}${request.url ?? "/"}`, { method: request.method ?? "GET", headers, body: body ?? null })
    const answer = Buffer.from(await upstream.arrayBuffer())
    const out: Record<string, string> = {}
    upstream.headers.forEach((value, name) => {
      if (name !== "content-encoding" && name !== "transfer-encoding" && name !== "connection" && name !== "content-length") out[name] = value
    })
    response.writeHead(upstream.status, out)
    response.end(answer)
  }
  const server = createHttpServer((request, response) => {
    handle(request, response).catch(() => response.destroy())
  })
  const sockets = track(server)
  const port = await listen(server)
  return { baseUrl: `http://127.0.0.1:${port}`, seen, close: () => closeServer(server, sockets) }
}

export interface DroppingProxy {
  readonly baseUrl: string
  /** connections accepted so far */
  readonly connections: () => number
  readonly close: () => Promise<void>
}

/**
 * A TCP proxy that, on its first connection, passes the request to the server
 * and resets the client's connection as soon as the answer starts: the server
 * has done the work, the client saw no answer. Later connections pass through.
 */
export const startDroppingProxy = async (target: { readonly host: string; readonly port: number }): Promise<DroppingProxy> => {
  let accepted = 0
  const server = createServer((client) => {
    accepted += 1
    const drop = accepted === 1
    const upstream = connect(target.port, target.host)
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
    client.pipe(upstream)
    if (drop) {
      upstream.once("data", () => {
        client.resetAndDestroy()
        upstream.destroy()
      })
    } else {
      upstream.pipe(client)
    }
  })
  const sockets = track(server)
  const port = await listen(server)
  return { baseUrl: `http://127.0.0.1:${port}`, connections: () => accepted, close: () => closeServer(server, sockets) }
}
