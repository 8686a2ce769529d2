import { createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"

/**
 * A git host that is slow or dead, on loopback, at the TCP level:
 * - "silent": accepts the connection, reads the request, never answers;
 * - "trickle": answers a ref advertisement's head at once, then a byte of body every `everyMillis`, never ending;
 * - "stops": answers the head and the first bytes of a ref advertisement, then nothing;
 * - "pack-silent": answers the ref advertisement whole and at once (a branch and the capabilities a fetch needs), and
 *   never answers the pack request (POST git-upload-pack);
 * - "pack-trickle": the same advertisement, then the pack request's head at once and a byte of a valid answer (NAK,
 *   then empty progress lines) every `everyMillis`, never ending.
 */
export type Stall = "silent" | "trickle" | "stops" | "pack-silent" | "pack-trickle"

export interface StalledHost {
  readonly origin: string
  /** Connections accepted so far. */
  readonly connections: () => number
  /** Connections open now. */
  readonly open: () => number
  /** Pack requests (POST) unanswered or unfinished now. */
  readonly packs: () => number
  readonly close: () => Promise<void>
}

const HEAD =
  "HTTP/1.1 200 OK\r\ncontent-type: application/x-git-upload-pack-advertisement\r\ntransfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"

/** One pkt-line. */
const pkt = (line: string) => `${(Buffer.byteLength(line, "latin1") + 4).toString(16).padStart(4, "0")}${line}`

/** A ref advertisement of one branch, `main`, with what a shallow fetch needs (whole, so the probe passes). */
const ADVERTISEMENT = [
  pkt("# service=git-upload-pack\n"),
  "0000",
  pkt(`${"1".repeat(40)} HEAD\0multi_ack shallow side-band-64k ofs-delta thin-pack symref=HEAD:refs/heads/main agent=stalled\n`),
  pkt(`${"1".repeat(40)} refs/heads/main\n`),
  "0000"
].join("")

const ADVERTISED =
  "HTTP/1.1 200 OK\r\ncontent-type: application/x-git-upload-pack-advertisement\r\ncache-control: no-cache\r\n" +
  `connection: close\r\ncontent-length: ${Buffer.byteLength(ADVERTISEMENT, "latin1")}\r\n\r\n${ADVERTISEMENT}`

const PACK_HEAD = "HTTP/1.1 200 OK\r\ncontent-type: application/x-git-upload-pack-result\r\ntransfer-encoding: chunked\r\n\r\n"

export const startStalledHost = async (stall: Stall, everyMillis = 500): Promise<StalledHost> => {
  const sockets = new Set<Socket>()
  const packs = new Set<Socket>()
  let accepted = 0
  const timers = new Set<ReturnType<typeof setInterval>>()
  /** Write `body` one byte in a chunk of its own every `everyMillis`, from `from` on and round again after its end. */
  const trickle = (socket: Socket, body: string, from: number) => {
    let at = 0
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer)
      const i = at < body.length ? at : from + ((at - body.length) % (body.length - from))
      at++
      socket.write(`1\r\n${body[i]}\r\n`, "latin1")
    }, everyMillis)
    timers.add(timer)
    socket.on("close", () => {
      clearInterval(timer)
      timers.delete(timer)
    })
  }
  const server = createServer((socket) => {
    accepted++
    sockets.add(socket)
    socket.on("error", () => {})
    socket.on("close", () => {
      sockets.delete(socket)
      packs.delete(socket)
    })
    if (stall === "silent") return socket.resume()
    socket.once("data", (first: Buffer) => {
      socket.resume()
      if (stall === "pack-silent" || stall === "pack-trickle") {
        if (!first.toString("latin1").startsWith("POST ")) return socket.end(ADVERTISED, "latin1")
        packs.add(socket)
        if (stall === "pack-silent") return
        socket.write(PACK_HEAD)
        // the end of the shallow section, NAK, then empty progress lines (band 2) for ever
        const answer = `0000${pkt("NAK\n")}`
        return trickle(socket, `${answer}0005\u0002`, answer.length)
      }
      socket.write(HEAD)
      // the start of "001e# service=git-upload-pack\n", one chunk of one byte at a time
      const body = "001e# service=git-upload-pack\n"
      if (stall === "stops") return socket.write(`4\r\n${body.slice(0, 4)}\r\n`)
      trickle(socket, body, 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  return {
    origin: `http://127.0.0.1:${address.port}`,
    connections: () => accepted,
    open: () => sockets.size,
    packs: () => packs.size,
    close: async () => {
      for (const timer of timers) clearInterval(timer)
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
