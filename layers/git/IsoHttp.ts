import type { HttpClient } from "isomorphic-git"
import { STATUS_CODES } from "node:http"
import { readAll, type Transport, TransportError } from "./Transport.js"

/** isomorphic-git's requests and answers are small (a push's pack, its report): more than this is refused. */
const MAX_EXCHANGE_BYTES = 32 * 1024 * 1024

async function* chunksOf(body: AsyncIterable<Uint8Array> | ReadonlyArray<Uint8Array> | undefined): AsyncIterableIterator<Uint8Array> {
  if (body) for await (const chunk of body) yield chunk
}

/**
 * isomorphic-git's HTTP client (for pushes) over the guarded transport, for one
 * repository: a request to any other origin is refused, and every exchange has
 * a deadline (isomorphic-git itself has none).
 */
export const isoHttpClient = (transport: Transport, repositoryUrl: string, timeoutMillis: number): HttpClient => {
  const origin = new URL(repositoryUrl).origin
  return {
    request: async ({ url, method, headers, body }) => {
      if (new URL(url).origin !== origin) throw new TransportError("refused a request to another origin than the repository's")
      const exchange = await transport.request(url, {
        method: method === "POST" ? "POST" : "GET",
        headers: headers ?? {},
        body: body === undefined ? undefined : await readAll(chunksOf(body), MAX_EXCHANGE_BYTES, "request"),
        signal: AbortSignal.timeout(timeoutMillis)
      })
      const responseHeaders: Record<string, string> = {}
      for (const [key, value] of Object.entries(exchange.headers)) {
        if (value !== undefined) responseHeaders[key] = Array.isArray(value) ? value.join(", ") : value
      }
      const answer = await readAll(exchange.body, MAX_EXCHANGE_BYTES, "answer")
      return {
        url: exchange.url.toString(),
        method: method ?? "GET",
        statusCode: exchange.status,
        statusMessage: STATUS_CODES[exchange.status] ?? "",
        headers: responseHeaders,
        body: chunksOf([answer])
      }
    }
  }
}
