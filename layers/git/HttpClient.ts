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

async function* once(bytes: Uint8Array): AsyncIterableIterator<Uint8Array> {
  yield bytes
}

const UPLOAD_PACK_REFS = "/info/refs?service=git-upload-pack"
const UPLOAD_PACK = "/git-upload-pack"

/** Does an upload-pack ref advertisement (protocol v0/v1) list `capability`? */
const advertises = (advertisement: Buffer, capability: string): boolean => {
  // the capabilities follow a NUL on the first ref line: `<oid> <ref>\0<cap> <cap>…\n`
  const nul = advertisement.indexOf(0)
  if (nul === -1) return false
  const end = advertisement.indexOf(0x0a, nul)
  return advertisement
    .subarray(nul + 1, end === -1 ? undefined : end)
    .toString("latin1")
    .split(" ")
    .includes(capability)
}

/** The upload-pack request with `capability` added to its first `want` line (where capabilities go). */
const requesting = (request: Buffer, capability: string): Buffer => {
  const length = Number.parseInt(request.subarray(0, 4).toString("latin1"), 16)
  if (!Number.isInteger(length) || length < 4 + 46 || length > request.length) return request
  const line = request.subarray(4, length).toString("latin1")
  // `want <40 hex> <capabilities>\n`
  if (!/^want [0-9a-f]{40} [^\n]*\n$/.test(line) || line.slice(0, -1).split(" ").includes(capability)) return request
  const wanted = `${line.slice(0, -1)} ${capability}\n`
  const header = (wanted.length + 4).toString(16).padStart(4, "0")
  return Buffer.concat([Buffer.from(header + wanted, "latin1"), request.subarray(length)])
}

/**
 * isomorphic-git's client for one fetch, asking for a thin pack when the server
 * offers one. isomorphic-git never asks for it, and git's upload-pack, asked for
 * a depth-1 fetch on top of a shallow commit the client has, then sends the whole
 * new tree again instead of what changed: every pull would download and index
 * the full snapshot. A thin pack's deltas may name base objects from the commit
 * offered as `have`, which the local store holds (isomorphic-git resolves them
 * there when it indexes the pack and when it reads).
 */
export const thinPackFetch = (http: HttpClient): HttpClient => {
  let offered = false
  return {
    request: async (request) => {
      if (request.method === "POST" && request.url.endsWith(UPLOAD_PACK) && offered) {
        const body = await collect(request.body)
        return http.request({ ...request, body: body === undefined ? undefined : once(requesting(body, "thin-pack")) })
      }
      const response = await http.request(request)
      if ((request.method ?? "GET") === "GET" && request.url.endsWith(UPLOAD_PACK_REFS) && response.statusCode === 200) {
        const advertisement = (await collect(response.body)) ?? Buffer.alloc(0)
        offered = advertises(advertisement, "thin-pack")
        return { ...response, body: once(advertisement) }
      }
      return response
    }
  }
}

/** `Authorization` for a token (`x-access-token:<token>`) or `user:password`. */
export const authHeaders = (token: string | undefined): Record<string, string> =>
  token === undefined
    ? {}
    : { authorization: `Basic ${Buffer.from(token.includes(":") ? token : `x-access-token:${token}`).toString("base64")}` }
