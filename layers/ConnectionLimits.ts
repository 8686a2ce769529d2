import type * as Http from "node:http"
import type { Socket } from "node:net"

/**
 * How long a client may take to send a request, and how many connections it may hold (README "Operating"). A
 * client that opens connections and never finishes its headers (slowloris) would otherwise hold a file descriptor
 * each until the process has none left for anyone.
 */
export interface ConnectionLimits {
  /** The request line and headers must be in within this (HTTP_HEADERS_TIMEOUT_MS); counted from the connection. */
  readonly headersMillis: number
  /** The whole request, body included, must be in within this (HTTP_REQUEST_TIMEOUT_MS); the answer may take longer. */
  readonly requestMillis: number
  /** Open connections at most (HTTP_MAX_CONNECTIONS); past it new ones are closed at once. */
  readonly maxConnections: number
  /** Open connections from one client address at most (HTTP_MAX_CONNECTIONS_PER_ADDRESS); past it, closed at once. */
  readonly maxPerAddress: number
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersMillis: 10_000,
  requestMillis: 120_000,
  maxConnections: 10_000,
  maxPerAddress: 1_000
}

/**
 * node:http's options for these deadlines. node looks for late requests every `connectionsCheckingInterval`
 * (30 s by default, which would let a late one linger that long): here a quarter of the header deadline, 1 s at most.
 */
export const serverOptions = (limits: ConnectionLimits): Http.ServerOptions => ({
  headersTimeout: limits.headersMillis,
  requestTimeout: limits.requestMillis,
  connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersMillis / 4)))
})

/** An IPv4 client seen on a dual-stack socket (`::ffff:10.0.0.1`) is the same client as `10.0.0.1`. */
const addressOf = (socket: Socket) => {
  const address = socket.remoteAddress ?? "unknown"
  return address.startsWith("::ffff:") ? address.slice(7) : address
}

/** Cap the server's connections, in all and per client address; connections past a cap are closed unanswered. */
export const limitConnections = (server: Http.Server, limits: ConnectionLimits) => {
  server.maxConnections = limits.maxConnections
  const open = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const address = addressOf(socket)
    const count = open.get(address) ?? 0
    if (count >= limits.maxPerAddress) {
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
