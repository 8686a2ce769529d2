import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Layer } from "effect"
import { Api } from "./Api.js"
import { AuthenticationLive } from "./auth/Authentication.js"
import { KeysHttp, MeHttp } from "./auth/Http.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { Identity } from "./auth/Identity.js"
import { UsersRepo } from "./auth/UsersRepo.js"
import { makeGlobalMiddleware } from "./http/GlobalMiddleware.js"
import { makeRouteTable } from "./http/RouteTable.js"
import { LabsHttp } from "./labs/Http.js"
import { Labs } from "./labs/Labs.js"
import { PlannedHttp, WebhooksHttp } from "./planned/Http.js"
import { RateLimits } from "./ratelimit/RateLimits.js"
import { StatusHttp } from "./status/Http.js"
import { TasksHttp } from "./tasks/Http.js"
import { Tasks } from "./tasks/Tasks.js"

const OPENAPI_PATH = "/api/v1/openapi.json"
const DOCS_PATH = "/docs"

const routes = makeRouteTable(Api, [
  { method: "GET", path: OPENAPI_PATH },
  { method: "GET", path: DOCS_PATH }
])

const Handlers = Layer.mergeAll(StatusHttp, MeHttp, KeysHttp, LabsHttp, TasksHttp, PlannedHttp, WebhooksHttp)

/** The domain services the handlers use, built on the adapters the environment provides. */
export const Services = Layer.mergeAll(Labs.Default, ApiKeys.Default, Tasks.Default, RateLimits.Default).pipe(
  Layer.provideMerge(UsersRepo.Default)
)

/**
 * The whole HTTP API as a layer: contract, handlers, middleware, OpenAPI and
 * docs. It needs the adapters (SqlClient, RateLimiterStore, JwtVerifier) and
 * settings (AdminKey, AdminLimits, DatabaseKind) from a composition in layers/.
 */
export const ApiLive = Layer.mergeAll(
  HttpApiBuilder.middleware(makeGlobalMiddleware(routes)),
  HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
  HttpApiScalar.layer({ path: DOCS_PATH })
).pipe(
  Layer.provideMerge(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers), Layer.provide(AuthenticationLive))),
  Layer.provide(Identity.Default),
  Layer.provideMerge(Services)
)
