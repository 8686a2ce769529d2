import * as HttpApiClient from "@effect/platform/HttpApiClient"
import { Api } from "./Api.js"

/**
 * A typed client derived from the same contract as the server:
 * `const client = yield* makeClient("http://localhost:8080")`, then
 * `client.tasks.list({ urlParams: { labId } })`. Needs an HttpClient layer
 * (FetchHttpClient.layer or NodeHttpClient.layerUndici) and the bearer token
 * set with `transformClient`.
 */
export const makeClient = (baseUrl: string, options?: Parameters<typeof HttpApiClient.make>[1]) =>
  HttpApiClient.make(Api, { ...options, baseUrl })

export { Api }
