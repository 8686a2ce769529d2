/**
 * A TCP proxy on a loopback port in front of a real service (PostgreSQL, Redis): `down()` closes the port and cuts
 * every connection through it, as the service going away would; `up()` opens the same port again.
 */
import { createServer, type Server, type Socket, connect } from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Refuse new connections and reset those open. */
  readonly down: () => Promise<void>
  /** Take connections again, on the same port. */
  readonly up: () => Promise<void>
  readonly close: () => Promise<void>
}

const listen = (server: Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : port)
    })
  })

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const open = new Set<Socket>()
  const track = (socket: Socket) => {
    open.add(socket)
    socket.once("close", () => open.delete(socket))
  }
  const makeServer = () =>
    createServer((client) => {
      const upstream = connect(target.port, target.host)
      track(client)
      track(upstream)
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
    })
  let server: Server | undefined = makeServer()
  const port = await listen(server, 0)

  const down = async () => {
    const closing = server
    server = undefined
    for (const socket of open) socket.resetAndDestroy()
    if (closing !== undefined) await new Promise<void>((resolve) => closing.close(() => resolve()))
  }
  const up = async () => {
    if (server !== undefined) return
    server = makeServer()
    await listen(server, port)
  }
  return { port, down, up, close: down }
}
