import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import * as App from "../../layers/App.js"
import { makeClient } from "../../src/Client.js"
import { type RequestOptions, requestAt } from "./Requests.js"
import { testSettings } from "./TestLayers.js"

export interface TestServer {
  readonly baseUrl: string
  readonly adminKey: string
  /** A raw HTTP call; `token` becomes the bearer credential, `json` the body. */
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<Response>
  /** The typed client of src/Client.ts, authenticated with `token`. */
  readonly client: (token: string) => Promise<Effect.Effect.Success<ReturnType<typeof makeClient>>>
  /** Run SQL against the server's own database (to break it on purpose, for instance). */
  readonly sql: <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Promise<A>
  readonly close: () => Promise<void>
}

/** Start the real server (node:http on a loopback port) on an in-memory PGlite unless told otherwise. */
export const startTestServer = async (overrides: Partial<App.AppSettings> = {}): Promise<TestServer> => {
  const settings = testSettings(overrides)
  const adminKey = Redacted.value(settings.adminKey)
  // a line per request at info level would bury a failing test's output: warnings and errors only, unless LOG_LEVEL says
  const quiet = process.env["LOG_LEVEL"] === undefined ? Logger.minimumLogLevel(LogLevel.Warning) : Layer.empty
  const layer: Layer.Layer<HttpServer.HttpServer | SqlClient.SqlClient, unknown> = App.server(settings).pipe(Layer.provide(quiet))
  const runtime = ManagedRuntime.make(layer)
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`

  return {
    baseUrl,
    adminKey,
    request: requestAt(baseUrl),
    client: (token) =>
      Effect.runPromise(
        makeClient(baseUrl, {
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
        }).pipe(Effect.provide(FetchHttpClient.layer))
      ),
    sql: (f) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, f)),
    close: () => runtime.dispose()
  }
}
