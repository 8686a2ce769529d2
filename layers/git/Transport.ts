import { Either } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import http, { type IncomingHttpHeaders, type IncomingMessage, STATUS_CODES } from "node:http"
import https from "node:https"
import type { LookupFunction } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { type AllowedHosts, addressVerdict, isAllowedName, literalVerdict, portOf } from "../../src/sync/HostPolicy.js"
import type { ExchangeMeter } from "../../src/sync/Git.js"

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

/**
 * A failed exchange with a git host; the message is a fixed description, safe to show. `transient`: the host may
 * well answer the same request if asked again shortly (a 5xx, a reset connection), so a fetch retries it.
 */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly transient = false
  ) {
    super(message)
  }
}

/** A phase of an exchange that ran out of time (see PhaseLimits): destroys the request with this. */
class PhaseTimeout extends Error {}

/** How long each phase of one exchange may take (README "Slow or dead git hosts"). */
export interface PhaseLimits {
  /** Until the TCP (and TLS) connection is up. */
  readonly connectMillis: number
  /** From the request's start until the answer's status line and headers are in. */
  readonly responseMillis: number
  /** The longest silence while the answer's body arrives. */
  readonly idleMillis: number
}

export const DEFAULT_PHASES: PhaseLimits = { connectMillis: 10_000, responseMillis: 30_000, idleMillis: 30_000 }

/** A name resolved to its addresses (tests swap this to play a rebinding name server). */
export type Resolve = (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true })

export interface TransportOptions {
  readonly allowed: AllowedHosts
  readonly resolve: Resolve
  readonly phases?: PhaseLimits
}

export interface Exchange {
  /** The URL answered, after same-origin redirects. */
  readonly url: URL
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: AsyncIterable<Buffer>
  /** Drop an answer not read (a refusal): its connection is closed rather than left holding unread bytes. */
  readonly discard: () => void
}

export interface GitRequest {
  readonly method: "GET" | "POST"
  readonly headers: Record<string, string>
  readonly body?: Buffer | undefined
  readonly signal: AbortSignal
  /** Told when the exchange begins and ends and as bytes move (a job slot is kept while they do: SlotLease.ts). */
  readonly meter?: ExchangeMeter | undefined
}

const MAX_REDIRECTS = 5

/** What went wrong, in words that carry nothing the remote chose. */
const describeFailure = (cause: unknown, signal: AbortSignal): TransportError => {
  if (cause instanceof TransportError) return cause
  if (cause instanceof PhaseTimeout) return new TransportError(cause.message)
  if (signal.aborted) return new TransportError("the git host did not answer in time")
  const code = cause instanceof Error && "code" in cause ? String(cause.code) : ""
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return new TransportError("the git host's name does not resolve")
  if (/^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return new TransportError("the git host's TLS certificate was not accepted")
  if (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "ETIMEDOUT") {
    return new TransportError("could not connect to the git host", code === "ECONNREFUSED")
  }
  // a reset or a closed connection: often a restarting host or proxy, worth asking again
  return new TransportError("the connection to the git host failed", code === "ECONNRESET" || code === "EPIPE")
}

/** Statuses a host or its proxy answers while briefly unable to serve: the request is asked again (UploadPack.ts). */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504])

/** An HTTP status as the failure's description: the number and its standard name, never the remote's reason phrase. */
export const statusFailure = (status: number): TransportError =>
  new TransportError(`the git host answered HTTP ${status}${STATUS_CODES[status] ? ` (${STATUS_CODES[status]})` : ""}`, TRANSIENT_STATUSES.has(status))

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

  private get phases(): PhaseLimits {
    return this.options.phases ?? DEFAULT_PHASES
  }

  /** One request; each phase (connect, the answer's head) cut by its limit, the whole by the request's signal. */
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
        (response) => {
          clearTimeout(head)
          resolve(response)
        }
      )
      const cut = (message: string) => () => exchange.destroy(new PhaseTimeout(message))
      const head = setTimeout(cut("the git host did not start answering in time (GIT_RESPONSE_TIMEOUT_MS)"), this.phases.responseMillis)
      exchange.on("socket", (socket) => {
        // a kept-alive socket is connected already
        if (!socket.connecting) return
        const connect = setTimeout(cut("could not connect to the git host in time (GIT_CONNECT_TIMEOUT_MS)"), this.phases.connectMillis)
        socket.once("connect", () => clearTimeout(connect))
        socket.once("close", () => clearTimeout(connect))
      })
      exchange.on("error", (cause) => {
        clearTimeout(head)
        reject(cause)
      })
      const sent = init.body?.length ?? 0
      exchange.end(init.body, () => init.meter?.moved(sent))
    })

  /** The answer's body, cut after `idleMillis` without a byte; any failure reading it is described, never quoted. */
  private readonly bodyOf = (response: IncomingMessage, init: GitRequest, ended: () => void): AsyncIterable<Buffer> => {
    const idleMillis = this.phases.idleMillis
    return {
      async *[Symbol.asyncIterator]() {
        let timer: ReturnType<typeof setTimeout> | undefined
        const arm = () => {
          timer = setTimeout(
            () => response.destroy(new PhaseTimeout("the git host stopped sending in the middle of its answer (GIT_IDLE_TIMEOUT_MS)")),
            idleMillis
          )
        }
        try {
          arm()
          for await (const chunk of response) {
            clearTimeout(timer)
            const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
            init.meter?.moved(bytes.length)
            // a job that gave its slot up while the host stalled takes it back before going on (SlotLease.ts)
            await init.meter?.proceed(false)
            yield bytes
            arm()
          }
          clearTimeout(timer)
          ended()
          await init.meter?.proceed(true)
        } catch (cause) {
          throw describeFailure(cause, init.signal)
        } finally {
          clearTimeout(timer)
          ended()
        }
      }
    }
  }

  /** One exchange with the git host at `url`, following same-origin redirects of a GET. */
  readonly request = async (url: string, init: GitRequest): Promise<Exchange> => {
    // open from the request until its answer is read, dropped or failed
    const ended = init.meter?.begin() ?? (() => {})
    try {
      let current = new URL(url)
      const origin = current.origin
      for (let hop = 0; ; hop++) {
        const response = await this.once(current, init)
        const status = response.statusCode ?? 0
        const location = response.headers.location
        if (status < 300 || status >= 400 || location === undefined) {
          const discard = () => {
            ended()
            response.destroy()
          }
          return { url: current, status, headers: response.headers, body: this.bodyOf(response, init, ended), discard }
        }
        response.resume()
        if (init.method !== "GET") throw new TransportError(`the git host redirected a ${init.method}`)
        const next = new URL(location, current)
        if (next.origin !== origin) throw new TransportError("the git host redirected to another origin (not followed)")
        if (hop >= MAX_REDIRECTS) throw new TransportError("the git host redirected too many times")
        current = next
      }
    } catch (cause) {
      ended()
      throw describeFailure(cause, init.signal)
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

/** Pauses before asking again after a transient failure (each ±20 %): three tries in all, within about 1.5 s. */
const RETRY_DELAYS_MILLIS = [250, 1_000]

/**
 * `exchange` again after a transient failure (a 5xx, a reset connection: TransportError.transient), at most twice,
 * after a short pause, and never past the request's deadline. A timeout is not retried: a stalled host would hold
 * the job for longer still.
 */
export const retryingTransient = async <A>(signal: AbortSignal, exchange: () => Promise<A>): Promise<A> => {
  for (let attempt = 0; ; attempt++) {
    try {
      return await exchange()
    } catch (cause) {
      const delay = RETRY_DELAYS_MILLIS[attempt]
      if (!(cause instanceof TransportError) || !cause.transient || delay === undefined || signal.aborted) throw cause
      const waited = await sleep(delay * (0.8 + 0.4 * Math.random()), true, { signal }).catch(() => false)
      if (!waited) throw cause
    }
  }
}

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
