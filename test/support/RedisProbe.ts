/** Whether the local Redis (127.0.0.1:6379, as on developer and CI machines) is there, for tests that need it. */
import { createConnection } from "node:net"

export const REDIS_HOST = "127.0.0.1"
export const REDIS_PORT = 6379

/** Is something listening on the Redis port? A short TCP connect, nothing more. */
const reachable = (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: REDIS_HOST, port: REDIS_PORT })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(500, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })

export const redisUp = await reachable()

/** What a skipped test's name says, and a warning printed once by the file that skips (`what` names it). */
export const redisSkipReason = (what: string) => {
  if (redisUp) return ""
  console.warn(`${what}: skipped, no Redis reachable on ${REDIS_HOST}:${REDIS_PORT}`)
  return ` [skipped: no Redis reachable on ${REDIS_HOST}:${REDIS_PORT}]`
}
