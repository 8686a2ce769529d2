import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import { Chunk, type Effect } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.js"
import type {
  AccessDenied,
  InvalidField,
  NotConfigured,
  NotFoundInLab,
  OverQuota,
  OverRateLimit,
  StateConflict,
  TransitionRefused,
  Unavailable,
  UpstreamFailed
} from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import type {
  BadGateway,
  Conflict,
  Forbidden,
  NotFound,
  PreconditionFailed,
  QuotaExceeded,
  RateLimited,
  ServiceUnavailable,
  ValidationError
} from "./Errors.js"
import { created, fetched, type Lab, type ListParams, listed, removed, updated } from "./LabHandlers.js"
import type { Page, PageQuery } from "../db/Paging.js"

/**
 * `labRoutes(handlers, lab, service)` handles each standard route (`list`, `create`, `get`, `update`, `delete`) the
 * group still has with the service's method of that name (`remove` for `delete`), the way `labResource` made the
 * endpoints: a page of items from the url's filters, create and update with the payload less its labId, one item by
 * its path id. The group's own routes chain after it.
 */

type Route = "list" | "create" | "get" | "update" | "delete"
const routes: ReadonlyArray<Route> = ["list", "create", "get", "update", "delete"]

type Endpoint<Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, R extends Route> =
  HttpApiEndpoint.HttpApiEndpoint.WithName<Endpoints, R>
type Standard<Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any> = Route &
  HttpApiEndpoint.HttpApiEndpoint.Name<Endpoints>
type MethodName<R extends Route> = R extends "delete" ? "remove" : R

/** What the route sends inside the envelope's `data`: one item, or for a list, the array of items. */
type Data<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any> =
  HttpApiEndpoint.HttpApiEndpoint.Success<Ep> extends { readonly data: infer A } ? A : never
type Item<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any> = Data<Ep> extends ReadonlyArray<infer A> ? A : never
type Id<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any> = HttpApiEndpoint.HttpApiEndpoint.PathParsed<Ep> extends infer P
  ? P[keyof P]
  : never
type Input<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any> = Omit<HttpApiEndpoint.HttpApiEndpoint.Payload<Ep>, "labId">
type Filter<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any> = PageQuery &
  Omit<HttpApiEndpoint.HttpApiEndpoint.UrlParams<Ep>, keyof ListParams>

/**
 * The failures a method may have: what the route (or its group, or the api) declares, and each domain error that
 * `AsHttp` sends as one of those.
 */
type Failure<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any, E> =
  | Declared<Ep, E>
  | (NotFound extends Declared<Ep, E> ? NotFoundInLab : never)
  | (ValidationError extends Declared<Ep, E> ? InvalidField : never)
  | (Conflict extends Declared<Ep, E> ? StateConflict | TransitionRefused : never)
  | (Forbidden extends Declared<Ep, E> ? AccessDenied : never)
  | (QuotaExceeded extends Declared<Ep, E> ? OverQuota : never)
  | (RateLimited extends Declared<Ep, E> ? OverRateLimit : never)
  | (PreconditionFailed extends Declared<Ep, E> ? NotConfigured : never)
  | (BadGateway extends Declared<Ep, E> ? UpstreamFailed : never)
  | (ServiceUnavailable extends Declared<Ep, E> ? Unavailable : never)
type Declared<Ep extends HttpApiEndpoint.HttpApiEndpoint.Any, E> = HttpApiEndpoint.HttpApiEndpoint.Error<Ep> | E

type Method<R extends Route, Ep extends HttpApiEndpoint.HttpApiEndpoint.Any, E> = R extends "list"
  ? (labId: LabId, query: Filter<Ep>) => Effect.Effect<Page<Item<Ep>>, Failure<Ep, E>>
  : R extends "create" ? (labId: LabId, input: Input<Ep>, actor: string) => Effect.Effect<Data<Ep>, Failure<Ep, E>>
  : R extends "get" ? (labId: LabId, id: Id<Ep>) => Effect.Effect<Data<Ep>, Failure<Ep, E>>
  : R extends "update"
    ? (labId: LabId, id: Id<Ep>, patch: Input<Ep>, actor: string) => Effect.Effect<Data<Ep>, Failure<Ep, E>>
  : (labId: LabId, id: Id<Ep>, actor: string) => Effect.Effect<Data<Ep>, Failure<Ep, E>>

/** The methods a service needs for the standard routes left in `Endpoints`, each typed by its route. */
export type LabService<Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E> = {
  readonly [R in Standard<Endpoints> as MethodName<R>]: Method<R, Endpoint<Endpoints, R>, E>
}

/** The handlers once `labRoutes` handled the standard routes: the rest left to handle, typed as `handle` would. */
type Registered<E, Provides, R, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any> = HttpApiBuilder.Handlers<
  E,
  Provides,
  | R
  | Exclude<
    HttpApiEndpoint.HttpApiEndpoint.ExcludeProvided<
      Endpoints,
      Standard<Endpoints>,
      CurrentPrincipal | HttpApiEndpoint.HttpApiEndpoint.ContextWithName<Endpoints, Standard<Endpoints>>
    >,
    Provides
  >,
  HttpApiEndpoint.HttpApiEndpoint.ExcludeName<Endpoints, Route>
>

/** The registrar as it runs, route by route, before the types above are laid over it. */
type LooseEndpoint<R extends Route> = HttpApiEndpoint.HttpApiEndpoint<
  R,
  HttpMethod.HttpMethod,
  Readonly<Record<string, unknown>>,
  ListParams & Readonly<Record<string, unknown>>,
  { readonly labId: string } & Readonly<Record<string, unknown>>,
  never,
  unknown,
  unknown
>
type LooseHandlers = HttpApiBuilder.Handlers<unknown, unknown, unknown, { [R in Route]: LooseEndpoint<R> }[Route]>
type Fields = Readonly<Record<string, unknown>>
interface LooseService {
  readonly list?: (labId: LabId, query: PageQuery & Fields) => Effect.Effect<Page<unknown>, unknown>
  readonly create?: (labId: LabId, input: Fields, actor: string) => Effect.Effect<unknown, unknown>
  readonly get?: (labId: LabId, id: unknown) => Effect.Effect<unknown, unknown>
  readonly update?: (labId: LabId, id: unknown, patch: Fields, actor: string) => Effect.Effect<unknown, unknown>
  readonly remove?: (labId: LabId, id: unknown, actor: string) => Effect.Effect<unknown, unknown>
}

const missing = (route: Route): never => {
  throw new Error(`labRoutes: the service has no method for the ${route} route`)
}

/** The one path parameter of `get`, `update` and `delete` (`labResource` makes path/:id with the params' one field). */
const idOf = (path: Fields): unknown => Object.values(path)[0]

const register = (handlers: LooseHandlers, route: Route, lab: Lab, service: LooseService): LooseHandlers => {
  switch (route) {
    case "list": {
      const list = service.list ?? missing(route)
      return handlers.handle(route, ({ urlParams }) => listed(lab, urlParams, list))
    }
    case "create": {
      const create = service.create ?? missing(route)
      return handlers.handle(route, ({ payload }) => created(lab, payload, create))
    }
    case "get": {
      const get = service.get ?? missing(route)
      return handlers.handle(route, ({ path, urlParams }) => fetched(lab, urlParams.labId, idOf(path), get))
    }
    case "update": {
      const update = service.update ?? missing(route)
      return handlers.handle(route, ({ path, payload }) => updated(lab, idOf(path), payload, update))
    }
    case "delete": {
      const remove = service.remove ?? missing(route)
      return handlers.handle(route, ({ path, urlParams }) => removed(lab, urlParams.labId, idOf(path), remove))
    }
  }
}

const registerAll = (handlers: LooseHandlers, lab: Lab, service: LooseService): LooseHandlers => {
  const handled = new Set(Chunk.toReadonlyArray(handlers.handlers).map((item) => item.endpoint.name))
  const left = routes.filter((route) => route in handlers.group.endpoints && !handled.has(route))
  return left.reduce((registered, route) => register(registered, route, lab, service), handlers)
}

/**
 * Handle the standard routes the group still has (see the top of this file). A service method that does not take
 * what its route delivers, returns what the route's success does not take, or fails with an error the route does not
 * declare (after `AsHttp`), does not compile; the result is the handlers with those routes gone, so
 * `HttpApiBuilder.group` still checks the rest are handled.
 */
export const labRoutes =
  // TypeScript cannot follow the generic Handlers type through a loop over the routes: the checks live in
  // LabService (per route, from the endpoint) and Registered (what `handle` returns for each), the body runs loose
  registerAll as unknown as <E, Provides, R, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any>(
    handlers: HttpApiBuilder.Handlers<E, Provides, R, Endpoints>,
    lab: Lab,
    service: NoInfer<LabService<Endpoints, E>>
  ) => Registered<E, Provides, R, Endpoints>
