import { createServer } from "node:net"

/** A TCP port on loopback that nothing listens on right now (no vitest here: the benchmarks import it too). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })
