import { Either } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import http, { type IncomingHttpHeaders, type IncomingMessage, STATUS_CODES } from "node:http"
import https from "node:https"
import type { LookupFunction } from "node:net"
import { type AllowedHosts, addressVerdict, isAllowedName, literalVerdict, portOf } from "../../src/sync/HostPolicy.js"

/**
 * Every request the service makes to a git host goes through here. The host is
 * the tenant's choice, so:
 * - only allowed addresses are connected to (public ones, or the operator's
 *   GIT_ALLOWED_HOSTS): IP literals are checked before connecting, names on the
 *   addresses they resolve to at connect time (a name that rebinds to a private
 *   address is refused then);
 * - redirects are followed for GETs within the same origin only, so a
 *   credential (sent only to the repository's origin) never leaves it;
 * - a failure is one of a few fixed descriptions: nothing the remote sent (a
 *   body, a reason phrase) reaches an error message, the sync status or the log.
 */

/** A failed exchange with a git host; the message is a fixed description, safe to show. */
export class TransportError extends Error {}

/** A name resolved to its addresses (tests swap this to play a rebinding name server). */
export type Resolve = (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true })

export interface TransportOptions {
  readonly allowed: AllowedHosts
  readonly resolve: Resolve
}

export interface Exchange {
  /** The URL answered, after same-origin redirects. */
  readonly url: URL
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: AsyncIterable<Buffer>
}

export interface GitRequest {
  readonly method: "GET" | "POST"
  readonly headers: Record<string, string>
  readonly body?: Buffer | undefined
  readonly signal: AbortSignal
}

const MAX_REDIRECTS = 5

/** What went wrong, in words that carry nothing the remote chose. */
const describeFailure = (cause: unknown, signal: AbortSignal): string => {
  if (cause instanceof TransportError) return cause.message
  if (signal.aborted) return "the git host did not answer in time"
  const code = cause instanceof Error && "code" in cause ? String(cause.code) : ""
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return "the git host's name does not resolve"
  if (/^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return "the git host's TLS certificate was not accepted"
  if (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "ETIMEDOUT") {
    return "could not connect to the git host"
  }
  return "the connection to the git host failed"
}

/** An HTTP status as the failure's description: the number and its standard name, never the remote's reason phrase. */
export const statusFailure = (status: number): TransportError =>
  new TransportError(`the git host answered HTTP ${status}${STATUS_CODES[status] ? ` (${STATUS_CODES[status]})` : ""}`)

/** The guarded transport: each connection checked against the host policy (see Transport above). */
export class GuardedTransport {
  constructor(
    private readonly options: TransportOptions
  ) {}

  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }

  /** node:net's lookup hook: resolve, keep only allowed addresses, refuse when none is left. */
  private readonly guardedLookup =
    (port: number): LookupFunction =>
    (hostname, lookupOptions, callback) => {
      this.options.resolve(hostname).then(
        (addresses) => {
          const verdicts = addresses.map((a) => ({ ...a, verdict: addressVerdict(this.options.allowed, a.address, port) }))
          const allowed = verdicts.filter((a) => Either.isRight(a.verdict))
          const first = allowed[0]
          if (first === undefined) {
            const refused = verdicts.find((a) => Either.isLeft(a.verdict))
            const why = refused && Either.isLeft(refused.verdict) ? refused.verdict.left : "it has no address"
            return callback(new TransportError(`${hostname} is not allowed: ${why}`), "", 4)
          }
          if (lookupOptions.all) return callback(null, allowed.map((a) => ({ address: a.address, family: a.family })))
          return callback(null, first.address, first.family)
        },
        (cause: unknown) => callback(cause instanceof Error ? cause : new Error("lookup failed"), "", 4)
      )
    }

  /** Refuse before connecting what needs no lookup: a literal private address, localhost. */
  private readonly checkLiteral = (url: URL) => {
    const verdict = literalVerdict(this.options.allowed, url)
    if (Either.isLeft(verdict)) throw new TransportError(`${url.hostname} is not allowed: ${verdict.left}`)
  }

  private readonly once = (url: URL, init: GitRequest) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      this.checkLiteral(url)
      const port = portOf(url)
      const secure = url.protocol === "https:"
      const exchange = (secure ? https : http).request(
        url,
        {
          method: init.method,
          headers: { ...init.headers, "accept-encoding": "identity", ...(init.body ? { "content-length": String(init.body.length) } : {}) },
          signal: init.signal,
          agent: secure ? this.agents.https : this.agents.http,
          // names the operator allowed reach any address; others only allowed ones
          ...(isAllowedName(this.options.allowed, url.hostname, port) ? {} : { lookup: this.guardedLookup(port) })
        },
        resolve
      )
      exchange.on("error", reject)
      exchange.end(init.body)
    })

  /** One exchange with the git host at `url`, following same-origin redirects of a GET. */
  readonly request = async (url: string, init: GitRequest): Promise<Exchange> => {
    try {
      let current = new URL(url)
      const origin = current.origin
      for (let hop = 0; ; hop++) {
        const response = await this.once(current, init)
        const status = response.statusCode ?? 0
        const location = response.headers.location
        if (status < 300 || status >= 400 || location === undefined) return { url: current, status, headers: response.headers, body: response }
        response.resume()
        if (init.method !== "GET") throw new TransportError(`the git host redirected a ${init.method}`)
        const next = new URL(location, current)
        if (next.origin !== origin) throw new TransportError("the git host redirected to another origin (not followed)")
        if (hop >= MAX_REDIRECTS) throw new TransportError("the git host redirected too many times")
        current = next
      }
    } catch (cause) {
      throw new TransportError(describeFailure(cause, init.signal))
    }
  }

  /** The link-time check: the URL's host is allowed, and a name resolves to at least one allowed address. */
  readonly check = async (url: URL): Promise<Either.Either<void, string>> => {
    const literal = literalVerdict(this.options.allowed, url)
    if (Either.isLeft(literal)) return Either.left(literal.left)
    if (!literal.right) return Either.void
    const addresses = await this.options.resolve(url.hostname).catch(() => undefined)
    if (addresses === undefined || addresses.length === 0) return Either.left(`${url.hostname} does not resolve`)
    const verdicts = addresses.map((a) => addressVerdict(this.options.allowed, a.address, portOf(url)))
    const refused = verdicts.find(Either.isLeft)
    return verdicts.some(Either.isRight) ? Either.void : Either.left(refused && Either.isLeft(refused) ? `${url.hostname} resolves to ${refused.left}` : "refused")
  }

  readonly close = () => {
    this.agents.http.destroy()
    this.agents.https.destroy()
  }

}

export const makeTransport = (options: TransportOptions) => new GuardedTransport(options)

export type Transport = ReturnType<typeof makeTransport>

/** The whole body of an answer, up to `limit` bytes (more is a failure, not memory). */
export const readAll = async (body: AsyncIterable<Uint8Array>, limit: number, what: string): Promise<Buffer> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > limit) throw new TransportError(`the git host's ${what} is over ${limit} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** `Authorization` for a token (`x-access-token:<token>`) or `user:password`. */
export const authHeaders = (token: string | undefined): Record<string, string> =>
  token === undefined
    ? {}
    : { authorization: `Basic ${Buffer.from(token.includes(":") ? token : `x-access-token:${token}`).toString("base64")}` }
