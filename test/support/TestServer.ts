import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, type Layer, ManagedRuntime, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as App from "../../layers/App.js"
import * as LocalProcessProvider from "../../layers/pods/LocalProcessProvider.js"
import { makeClient } from "../../src/Client.js"
import { type RequestOptions, requestAt } from "./http.js"

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
  const adminKey = `lsk_test_admin_${randomBytes(16).toString("hex")}`
  const settings: App.AppSettings = {
    port: 0,
    host: "127.0.0.1",
    database: { kind: "pglite", dataDir: undefined },
    redisUrl: Option.none(),
    adminKey: Redacted.make(adminKey),
    masterKey: Redacted.make(randomBytes(32).toString("hex")),
    jwt: Option.none(),
    adminLimits: { perMinute: 1_000_000, perDay: 10_000_000 },
    // tests deliver failing webhooks on purpose; test/e2e/webhook-limits.test.ts sets the deployment's 10
    webhookFailuresPerMinute: 1_000,
    publicBaseUrl: new URL("http://127.0.0.1"),
    git: { kind: "memory" },
    pods: { command: LocalProcessProvider.DEFAULT_COMMAND, stopGraceMillis: 2_000 },
    ...overrides
  }
  const layer: Layer.Layer<HttpServer.HttpServer | SqlClient.SqlClient, unknown> = App.server(settings)
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
