/** Raw HTTP calls of the tests, without vitest: the benchmarks (through ServiceProcess.ts) import them too. */

export interface RequestOptions {
  readonly token?: string
  readonly json?: unknown
  readonly body?: string
  readonly headers?: Record<string, string>
}

/** A raw HTTP call to the server at `baseUrl`: `token` becomes the bearer credential, `json` the body. */
export const requestAt = (baseUrl: string) => (method: string, path: string, options: RequestOptions = {}) =>
  fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.json !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers
    },
    body: options.json !== undefined ? JSON.stringify(options.json) : options.body
  })
