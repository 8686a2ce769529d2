import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * An HTTP server on loopback that plays a git host the test controls (a
 * crafted pack, a redirect, a hostile answer), or a canary that only records
 * what reached it. Every request is recorded with its Authorization header.
 */
export interface FakeHost {
  readonly port: number
  readonly origin: string
  readonly requests: () => ReadonlyArray<{ readonly method: string; readonly url: string; readonly authorization: string | undefined }>
  readonly close: () => Promise<void>
}

export const startFakeHost = async (handle: (req: IncomingMessage, res: ServerResponse) => void = (_, res) => res.writeHead(404).end()) => {
  const seen: Array<{ method: string; url: string; authorization: string | undefined }> = []
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization })
    req.resume()
    handle(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const port = address.port
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests: () => [...seen],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  } satisfies FakeHost
}

const pkt = (payload: string | Buffer): Buffer => {
  const bytes = typeof payload === "string" ? Buffer.from(payload) : payload
  return Buffer.concat([Buffer.from((bytes.length + 4).toString(16).padStart(4, "0")), bytes])
}

/** Answers a depth-1 fetch of `main` at `tip` with `pack`, as git's smart HTTP does (side band, 64 KiB lines). */
export const servePack = (tip: string, pack: Buffer) => (req: IncomingMessage, res: ServerResponse) => {
  if (req.method === "GET" && req.url?.endsWith("/info/refs?service=git-upload-pack")) {
    res.writeHead(200, { "content-type": "application/x-git-upload-pack-advertisement" })
    res.end(
      Buffer.concat([
        pkt("# service=git-upload-pack\n"),
        Buffer.from("0000"),
        pkt(`${tip} refs/heads/main\0shallow side-band-64k ofs-delta thin-pack\n`),
        Buffer.from("0000")
      ])
    )
    return
  }
  if (req.method === "POST" && req.url?.endsWith("/git-upload-pack")) {
    res.writeHead(200, { "content-type": "application/x-git-upload-pack-result" })
    res.write(Buffer.concat([pkt(`shallow ${tip}\n`), Buffer.from("0000"), pkt("NAK\n")]))
    for (let at = 0; at < pack.length; at += 65_000) res.write(pkt(Buffer.concat([Buffer.from([1]), pack.subarray(at, at + 65_000)])))
    res.end(Buffer.from("0000"))
    return
  }
  res.writeHead(404).end()
}
