import { createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"

/**
 * A git host that is slow or dead, on loopback, at the TCP level:
 * - "silent": accepts the connection, reads the request, never answers;
 * - "trickle": answers a ref advertisement's head at once, then a byte of body every `everyMillis`, never ending;
 * - "stops": answers the head and the first bytes of a ref advertisement, then nothing.
 */
export type Stall = "silent" | "trickle" | "stops"

export interface StalledHost {
  readonly origin: string
  /** Connections accepted so far. */
  readonly connections: () => number
  /** Connections open now. */
  readonly open: () => number
  readonly close: () => Promise<void>
}

const HEAD =
  "HTTP/1.1 200 OK\r\ncontent-type: application/x-git-upload-pack-advertisement\r\ntransfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"

export const startStalledHost = async (stall: Stall, everyMillis = 500): Promise<StalledHost> => {
  const sockets = new Set<Socket>()
  let accepted = 0
  const timers = new Set<ReturnType<typeof setInterval>>()
  const server = createServer((socket) => {
    accepted++
    sockets.add(socket)
    socket.on("error", () => {})
    socket.on("close", () => sockets.delete(socket))
    if (stall === "silent") return socket.resume()
    socket.once("data", () => {
      socket.resume()
      socket.write(HEAD)
      // the start of "001e# service=git-upload-pack\n", one chunk of one byte at a time
      const body = "001e# service=git-upload-pack\n"
      if (stall === "stops") return socket.write(`4\r\n${body.slice(0, 4)}\r\n`)
      let at = 0
      const timer = setInterval(() => {
        if (socket.destroyed) return clearInterval(timer)
        socket.write(`1\r\n${body[at++ % body.length]}\r\n`)
      }, everyMillis)
      timers.add(timer)
      socket.on("close", () => {
        clearInterval(timer)
        timers.delete(timer)
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  return {
    origin: `http://127.0.0.1:${address.port}`,
    connections: () => accepted,
    open: () => sockets.size,
    close: async () => {
      for (const timer of timers) clearInterval(timer)
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
