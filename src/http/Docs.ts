import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Context, Effect, Layer, Option } from "effect"

/**
 * The server the OpenAPI document names: PUBLIC_BASE_URL when it is configured. Otherwise the document keeps src/Api.ts's
 * relative "/", the origin it was fetched from: the default PUBLIC_BASE_URL (localhost) is wrong for a reader elsewhere.
 */
export class DocumentServer extends Context.Reference<DocumentServer>()("DocumentServer", {
  defaultValue: (): Option.Option<URL> => Option.none()
}) {}

/** The contract the document and the docs page are made of, naming the configured server if any. */
const documented = Effect.gen(function* () {
  const { api, context } = yield* HttpApi.Api
  const server = yield* DocumentServer
  return Option.match(server, {
    onNone: () => ({ api, context }),
    onSome: (url) => ({
      // Redocly refuses a server URL ending in "/" (no-server-trailing-slash); paths start with one
      api: api.annotate(OpenApi.Servers, [{ url: url.href.replace(/\/+$/, ""), description: "PUBLIC_BASE_URL" }]),
      context
    })
  })
})

/**
 * The OpenAPI document on GET `path`, made at its first request and kept: `HttpApiBuilder.middlewareOpenApi` makes it
 * while the server starts, ~100 ms of the start on this machine (CPU profile of a start on PostgreSQL).
 */
export const openApi = (path: `/${string}`) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const { api } = yield* documented
      // uninterruptible: a client gone while it is made would otherwise leave the interruption cached
      const document = yield* Effect.cached(
        Effect.uninterruptible(Effect.suspend(() => HttpServerResponse.json(OpenApi.fromApi(api))).pipe(Effect.orDie))
      )
      yield* router.get(path, document)
    })
  )

/**
 * The interactive API reference (Scalar) on GET `path`, built at its first request. `HttpApiScalar.layer` loaded
 * eagerly keeps Scalar's 3 MB script and the page made of it in memory from start: +25 MiB resident, +16 MiB heap
 * (measured by importing the module alone), for a page few processes ever serve.
 */
export const page = (path: `/${string}`) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const api = yield* documented
      // uninterruptible, as the document above
      const page = yield* Effect.cached(
        Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
          Effect.flatMap((Scalar) =>
            HttpApiBuilder.Router.router.pipe(
              Effect.provide(
                Scalar.layer({ path }).pipe(
                  Layer.provideMerge(HttpApiBuilder.Router.Live),
                  Layer.provide(Layer.succeed(HttpApi.Api, api))
                )
              )
            )
          ),
          Effect.uninterruptible
        )
      )
      yield* router.get(path, Effect.flatten(page))
    })
  )
