import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Layer } from "effect"

/**
 * The interactive API reference (Scalar) on GET `path`, built at its first request. `HttpApiScalar.layer` loaded
 * eagerly keeps Scalar's 3 MB script and the page made of it in memory from start: +25 MiB resident, +16 MiB heap
 * (measured by importing the module alone), for a page few processes ever serve.
 */
export const layer = (path: `/${string}`) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const api = yield* HttpApi.Api
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
          )
        )
      )
      yield* router.get(path, Effect.flatten(page))
    })
  )
