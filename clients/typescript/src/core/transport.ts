/**
 * One HTTP call with the client's policy: credential, timeout, retries with
 * exponential backoff and jitter (honouring Retry-After) on a dropped
 * connection, a timeout, 429 and 503, and one Idempotency-Key per write that
 * every retry repeats, so the service does the work once.
 */
import { ApiError, ConnectionError, LabServiceError, TimeoutError, apiErrorOf } from "./errors.js"

export interface ClientOptions {
  /** API key or JWT; default `LAB_SERVICE_API_KEY` from the environment */
  readonly apiKey?: string | undefined
  /** e.g. https://lab.example.org; default `LAB_SERVICE_BASE_URL`, else http://localhost:3000 */
  readonly baseUrl?: string | undefined
  /** retries after the first try (default 2) */
  readonly maxRetries?: number | undefined
  /** milliseconds per try (default 60 000) */
  readonly timeout?: number | undefined
  /** headers sent on every call */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** another fetch (a test double, a proxy agent); default the platform's */
  readonly fetch?: typeof fetch | undefined
}

export interface RequestOptions {
  readonly maxRetries?: number | undefined
  readonly timeout?: number | undefined
  /** for POST, PATCH and DELETE; generated when not given */
  readonly idempotencyKey?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly signal?: AbortSignal | undefined
}

export type AnswerKind = "envelope" | "bare" | "text" | "binary"

export interface Call {
  readonly method: string
  readonly path: string
  readonly query?: object | undefined
  readonly body?: unknown
  readonly answer: AnswerKind
}

/** An answer: the body as the operation shapes it, with its headers. */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  /** the parsed JSON, the text or the bytes */
  readonly body: unknown
}

const DEFAULT_BASE_URL = "http://localhost:3000"
const DEFAULT_TIMEOUT = 60_000
const DEFAULT_MAX_RETRIES = 2
const INITIAL_DELAY = 500
const MAX_DELAY = 8_000
const MAX_RETRY_AFTER = 60_000

const environment = (name: string): string | undefined => {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
  const value = process?.env?.[name]
  return value === undefined || value === "" ? undefined : value
}

const randomKey = (): string => {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (crypto?.randomUUID) return crypto.randomUUID()
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** Retry-After in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterMs = (headers: Headers, now = Date.now()): number | undefined => {
  const value = headers.get("retry-after")
  if (value === null) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && value.trim() !== "") return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Exponential backoff with jitter (75–100 % of the step), or the server's Retry-After. */
export const retryDelay = (retry: number, headers: Headers | undefined): number => {
  const asked = headers ? retryAfterMs(headers) : undefined
  if (asked !== undefined) return Math.min(asked, MAX_RETRY_AFTER)
  const step = Math.min(MAX_DELAY, INITIAL_DELAY * 2 ** retry)
  return step * (0.75 + Math.random() * 0.25)
}

const isRetryable = (error: LabServiceError) =>
  error instanceof ConnectionError || (error instanceof ApiError && (error.status === 429 || error.status === 503))

const queryString = (query: object | undefined): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue
    if (Array.isArray(value)) search.set(key, value.map(String).join(","))
    else search.set(key, String(value))
  }
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

export class Transport {
  readonly apiKey: string | undefined
  readonly baseUrl: string
  readonly maxRetries: number
  readonly timeout: number
  private readonly headers: Readonly<Record<string, string>>
  private readonly fetch: typeof fetch

  constructor(options: ClientOptions = {}) {
    this.apiKey = options.apiKey ?? environment("LAB_SERVICE_API_KEY")
    this.baseUrl = (options.baseUrl ?? environment("LAB_SERVICE_BASE_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "")
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT
    this.headers = options.headers ?? {}
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  }

  /** Sends the call, retrying as the policy allows; throws a LabServiceError. */
  async request(call: Call, options: RequestOptions = {}): Promise<Answer> {
    const maxRetries = options.maxRetries ?? this.maxRetries
    const isWrite = call.method === "POST" || call.method === "PATCH" || call.method === "DELETE"
    const idempotencyKey = isWrite ? (options.idempotencyKey ?? randomKey()) : undefined
    for (let retry = 0; ; retry++) {
      try {
        return await this.once(call, options, idempotencyKey)
      } catch (error) {
        if (!(error instanceof LabServiceError) || !isRetryable(error) || retry >= maxRetries) throw error
        if (options.signal?.aborted) throw error
        await sleep(retryDelay(retry, error instanceof ApiError ? error.headers : undefined), options.signal)
      }
    }
  }

  private async once(call: Call, options: RequestOptions, idempotencyKey: string | undefined): Promise<Answer> {
    const timeout = options.timeout ?? this.timeout
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, timeout)
    const onCallerAbort = () => controller.abort(options.signal?.reason)
    options.signal?.addEventListener("abort", onCallerAbort, { once: true })
    const headers: Record<string, string> = { accept: "application/json", ...this.headers, ...options.headers }
    if (this.apiKey !== undefined) headers["authorization"] = `Bearer ${this.apiKey}`
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey
    if (call.body !== undefined) headers["content-type"] = "application/json"
    try {
      let response: Response
      try {
        response = await this.fetch(`${this.baseUrl}${call.path}${queryString(call.query)}`, {
          method: call.method,
          headers,
          body: call.body === undefined ? null : JSON.stringify(call.body),
          signal: controller.signal
        })
      } catch (cause) {
        if (options.signal?.aborted) throw options.signal.reason
        if (timedOut) throw new TimeoutError(`no answer within ${timeout} ms: ${call.method} ${call.path}`, { cause })
        throw new ConnectionError(`connection failed: ${call.method} ${call.path}`, { cause })
      }
      return await this.read(call, response, () => timedOut, timeout)
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener("abort", onCallerAbort)
    }
  }

  private async read(call: Call, response: Response, timedOut: () => boolean, timeout: number): Promise<Answer> {
    let text: string | undefined
    let bytes: Uint8Array | undefined
    try {
      if (call.answer === "binary" && response.ok) bytes = new Uint8Array(await response.arrayBuffer())
      else text = await response.text()
    } catch (cause) {
      if (timedOut()) throw new TimeoutError(`answer not read within ${timeout} ms: ${call.method} ${call.path}`, { cause })
      throw new ConnectionError(`connection dropped while reading: ${call.method} ${call.path}`, { cause })
    }
    const parsed = text === undefined ? undefined : parseJson(text)
    if (!response.ok) throw apiErrorOf(response.status, response.headers, parsed ?? text)
    const body = call.answer === "binary" ? bytes : call.answer === "text" ? text : parsed
    return { status: response.status, headers: response.headers, body }
  }
}

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
