import type { HttpClient } from "isomorphic-git"

const collect = async (body: AsyncIterableIterator<Uint8Array> | undefined): Promise<Buffer | undefined> => {
  if (!body) return undefined
  const chunks: Array<Uint8Array> = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks)
}

async function* iterate(stream: ReadableStream<Uint8Array> | null): AsyncIterableIterator<Uint8Array> {
  if (!stream) return
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}

/**
 * isomorphic-git's HTTP client over Node's fetch, with a deadline for the whole
 * exchange (isomorphic-git itself has none) and the lab's credential sent up front.
 */
export const makeHttpClient = (timeoutMillis: number): HttpClient => ({
  request: async ({ url, method, headers, body }) => {
    const response = await fetch(url, {
      method: method ?? "GET",
      headers: headers ?? {},
      body: await collect(body),
      signal: AbortSignal.timeout(timeoutMillis),
      redirect: "follow"
    })
    const responseHeaders: Record<string, string> = {}
    response.headers.forEach((value, key) => {
      responseHeaders[key] = value
    })
    return {
      url: response.url,
      method: method ?? "GET",
      statusCode: response.status,
      statusMessage: response.statusText,
      headers: responseHeaders,
      body: iterate(response.body)
    }
  }
})

/** `Authorization` for a token (`x-access-token:<token>`) or `user:password`. */
export const authHeaders = (token: string | undefined): Record<string, string> =>
  token === undefined
    ? {}
    : { authorization: `Basic ${Buffer.from(token.includes(":") ? token : `x-access-token:${token}`).toString("base64")}` }
