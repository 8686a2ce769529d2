/**
 * Issue 21 item 10: about 19,800 half-sent requests from one address (headers never finished) used up the
 * process's file descriptors, and were not closed within 100 s. Here, with the caps set low: one address holds at
 * most its share of connections and the excess is closed at once, the total is capped, a normal client from another
 * address is still served, and half-sent requests (nothing sent, headers cut, headers dripped a byte at a time, a
 * body never finished) are answered 408 and closed at their deadline.
 */
import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ConnectionLimits } from "../../layers/ConnectionLimits.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

const LIMITS: ConnectionLimits = { headersMillis: 2_000, requestMillis: 4_000, maxConnections: 250, maxPerAddress: 100 }

interface Held {
  readonly socket: Socket
  readonly openedAt: number
  closedAt: number | undefined
  received: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Poll until `check` holds (or the time is up); answers whether it held. */
const until = async (check: () => boolean, millis: number) => {
  const deadline = Date.now() + millis
  while (!check() && Date.now() < deadline) await sleep(25)
  return check()
}

describe("connection deadlines and caps (slowloris)", () => {
  let server: TestServer
  let port: number
  const all: Array<Held> = []

  beforeAll(async () => {
    server = await startTestServer({ connections: LIMITS })
    port = Number(new URL(server.baseUrl).port)
  })
  afterAll(async () => {
    for (const held of all) held.socket.destroy()
    await server?.close()
  })

  /** A connection from this loopback address that sends `first` (maybe nothing) and then waits. */
  const open = (from: string, first: string) =>
    new Promise<Held>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port, localAddress: from })
      const held: Held = { socket, openedAt: Date.now(), closedAt: undefined, received: "" }
      all.push(held)
      socket.on("data", (chunk: Buffer) => (held.received += chunk.toString()))
      socket.on("error", () => {})
      socket.on("close", () => (held.closedAt = Date.now()))
      socket.once("connect", () => {
        if (first !== "") socket.write(first)
        resolve(held)
      })
      socket.once("close", () => resolve(held))
    })
  const openMany = (from: string, n: number, first: string) => Promise.all(Array.from({ length: n }, () => open(from, first)))
  const stillOpen = (held: ReadonlyArray<Held>) => held.filter((h) => h.closedAt === undefined).length

  const normalClient = async () => {
    const response = await server.request("GET", "/api/v1/me", { token: server.adminKey })
    await response.body?.cancel()
    return response.status
  }

  it("keeps one address to its share, caps the total, serves others, and closes half-sent requests at their deadline", { timeout: 60_000 }, async () => {
    // one address opens 250 connections with headers cut short: 100 stay, the rest are closed at once
    const cut = await openMany("127.0.0.2", 250, "GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    expect(await until(() => stillOpen(cut) === LIMITS.maxPerAddress, 3_000)).toBe(true)
    const closedAtOnce = cut.filter((h) => h.closedAt !== undefined)
    expect(closedAtOnce).toHaveLength(150)
    // closed unanswered, well before any deadline
    for (const held of closedAtOnce) expect((held.closedAt ?? 0) - held.openedAt).toBeLessThan(LIMITS.headersMillis)

    // a normal client, from another address, is served meanwhile
    expect(await normalClient()).toBe(200)

    // other addresses: a connection that sends nothing, one that drips its headers, one whose body never ends;
    // then more from two addresses until the total cap (250) is reached
    const silent = await open("127.0.0.3", "")
    const drip = await open("127.0.0.3", "GET /api/v1/status HTTP/1.1\r\n")
    const dripping = setInterval(() => drip.socket.write("X"), 200)
    const body = await open(
      "127.0.0.3",
      `POST /api/v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"labId":`
    )
    const more = [...(await openMany("127.0.0.4", 100, "")), ...(await openMany("127.0.0.5", 100, ""))]
    const everyone = [...cut, silent, drip, body, ...more]
    // the server's other connections (the normal client's, kept alive) count too: at most the cap stay open
    await until(() => stillOpen(more) <= LIMITS.maxConnections - LIMITS.maxPerAddress - 3, 3_000)
    await sleep(200)
    expect(stillOpen(everyone)).toBeLessThanOrEqual(LIMITS.maxConnections)
    expect(stillOpen(everyone)).toBeGreaterThanOrEqual(LIMITS.maxConnections - 5)
    expect(stillOpen([silent, drip, body])).toBe(3)

    try {
      // past the header deadline (node checks a quarter of it apart): every request still without headers is gone
      const headersDue = [...cut.filter((h) => !closedAtOnce.includes(h)), silent, drip]
      expect(await until(() => stillOpen(headersDue) === 0, LIMITS.headersMillis * 3)).toBe(true)
      for (const held of headersDue) {
        const lived = (held.closedAt ?? 0) - held.openedAt
        expect(lived).toBeGreaterThanOrEqual(LIMITS.headersMillis - 100)
        expect(held.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*"code":"request_timeout"/)
      }
      // the body that never ends, at the request deadline
      expect(await until(() => body.closedAt !== undefined, LIMITS.requestMillis * 2)).toBe(true)
      expect((body.closedAt ?? 0) - body.openedAt).toBeGreaterThanOrEqual(LIMITS.requestMillis - 100)
      expect(body.received).toMatch(/^HTTP\/1\.1 408 /)
    } finally {
      clearInterval(dripping)
    }

    // with the slots freed, the normal client is served again
    expect(await until(() => stillOpen(more) === 0, LIMITS.headersMillis * 3)).toBe(true)
    expect(await normalClient()).toBe(200)
  })
})
