/**
 * The fast tier: services as the server builds them, on an in-memory PGlite (migrated) and the in-memory git, with
 * no HTTP in between. `testLayer(Memories.Default)` gives a test the service and everything under it, for
 * `layer(...)` / `it.effect` of @effect/vitest; the same settings start the real server in TestServer.ts.
 */
import { Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as App from "../../layers/App.js"
import * as LocalProcessProvider from "../../layers/pods/LocalProcessProvider.js"

/** The settings of a test instance: in-memory PGlite and git, a random admin key, limits out of the way. */
export const testSettings = (overrides: Partial<App.AppSettings> = {}): App.AppSettings => ({
  port: 0,
  host: "127.0.0.1",
  database: { kind: "pglite", dataDir: undefined },
  redisUrl: Option.none(),
  adminKey: Redacted.make(`lsk_test_admin_${randomBytes(16).toString("hex")}`),
  masterKey: Redacted.make(randomBytes(32).toString("hex")),
  jwt: Option.none(),
  adminLimits: { perMinute: 1_000_000, perDay: 10_000_000 },
  // tests deliver failing webhooks on purpose; test/sync/webhook-limits.test.ts sets the deployment's 10
  webhookFailuresPerMinute: 1_000,
  publicBaseUrl: new URL("http://127.0.0.1"),
  git: { kind: "memory" },
  pods: { command: LocalProcessProvider.DEFAULT_COMMAND, stopGraceMillis: 2_000 },
  ...overrides
})

/** The adapters a service runs on in a test (database, git, rate-limit store, settings). */
export const TestEnvironment = (overrides: Partial<App.AppSettings> = {}) => App.environment(testSettings(overrides))

/** A service's layer with everything under it on the test environment; the environment stays visible to the test. */
export const testLayer = <A, E, R>(service: Layer.Layer<A, E, R>, overrides: Partial<App.AppSettings> = {}) =>
  service.pipe(Layer.provideMerge(TestEnvironment(overrides)))
