import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "./Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "./Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "./Errors.js"
import { PageParams } from "../db/Paging.js"

/**
 * The endpoint shapes every lab resource shares: a page of items, create
 * (201), and one item by its path id (get, update, delete). Each builder
 * returns the HttpApiEndpoint with its literal name, so a group's handlers
 * still typecheck; the caller adds the summary, description and any route-specific errors.
 */

type Path = HttpApiEndpoint.PathSegment
type UrlParams<Q extends Schema.Schema.Any> = Q & HttpApiEndpoint.HttpApiEndpoint.ValidateUrlParams<Q>
type PathParams<P extends Schema.Schema.Any> = P & HttpApiEndpoint.HttpApiEndpoint.ValidatePath<P>

/** `?labId=` alone: how reading or deleting one item names its lab. */
export const LabQuery = Schema.Struct({ labId: LabRef })

/** A list's query: its own filters plus `limit` and `cursor`. */
export const paged = <Fields extends Schema.Struct.Fields>(fields: Fields) => Schema.Struct({ ...fields, ...PageParams })

/** GET path, named: a page of items, newest first (a group's second list, e.g. its templates). */
export const pageOf = <const Name extends string, Q extends Schema.Schema.Any, Item extends Schema.Schema.Any>(
  name: Name,
  path: Path,
  query: UrlParams<Q>,
  item: Item
) => HttpApiEndpoint.get(name, path).setUrlParams<Q>(query).addSuccess(ListEnvelope(item))

/** GET path: the group's "list". */
export const listOf = <Q extends Schema.Schema.Any, Item extends Schema.Schema.Any>(path: Path, query: UrlParams<Q>, item: Item) =>
  pageOf("list", path, query, item)

/** POST path, named: create one, 201. */
export const createAs = <const Name extends string, P extends Schema.Schema.Any, Item extends Schema.Schema.Any>(
  name: Name,
  path: Path,
  payload: P,
  item: Item
) => HttpApiEndpoint.post(name, path).setPayload(payload).addSuccess(Envelope(item), { status: 201 })

/** POST path: the group's "create". */
export const createIn = <P extends Schema.Schema.Any, Item extends Schema.Schema.Any>(path: Path, payload: P, item: Item) =>
  createAs("create", path, payload, item)

/** GET path/:id?labId=: one item. */
export const getById = <P extends Schema.Schema.Any, Item extends Schema.Schema.Any>(
  path: Path,
  params: PathParams<P>,
  item: Item
) => HttpApiEndpoint.get("get", path).setPath<P>(params).setUrlParams(LabQuery).addSuccess(Envelope(item))

/** PATCH path/:id: change one item (the payload names the lab). */
export const updateById = <P extends Schema.Schema.Any, B extends Schema.Schema.Any, Item extends Schema.Schema.Any>(
  path: Path,
  params: PathParams<P>,
  payload: B,
  item: Item
) => HttpApiEndpoint.patch("update", path).setPath<P>(params).setPayload(payload).addSuccess(Envelope(item))

/** DELETE path/:id?labId=: delete one item, answering it as it was. */
export const deleteById = <P extends Schema.Schema.Any, Item extends Schema.Schema.Any>(
  path: Path,
  params: PathParams<P>,
  item: Item
) => HttpApiEndpoint.del("delete", path).setPath<P>(params).setUrlParams(LabQuery).addSuccess(Envelope(item))

/**
 * The tail of every lab resource group: 403 and 404 on each route, the
 * caller authenticated, the routes under /api/v1. Apply it after the last
 * `.add` (the prefix only reaches endpoints already added): `.pipe(labGroup)`.
 */
export const labGroup = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
) => group.addError(ForbiddenWire).addError(NotFoundWire).middleware(Authentication).prefix("/api/v1")

/** What the OpenAPI document (and so the docs page and generated clients) says of a route: what it does, when to use it. */
export interface RouteDoc {
  readonly summary: string
  readonly description: string
}

/** An endpoint with its summary and description, and 409 declared when `conflict`. */
const described = <N extends string, M extends HttpMethod.HttpMethod, Pa, Ur, Pl, H, S, Er, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<N, M, Pa, Ur, Pl, H, S, Er, R, RE>,
  doc: RouteDoc,
  conflict: boolean
): HttpApiEndpoint.HttpApiEndpoint.Any => {
  const annotated = endpoint.annotateContext(OpenApi.annotations(doc))
  return conflict ? annotated.addError(ConflictWire) : annotated
}

type Route = "list" | "create" | "get" | "update" | "delete"

/** The endpoint a route of `labResource` makes, with 409 declared when the route is in `conflicts`. */
type RouteEndpoint<
  R extends Route,
  K extends Route,
  Q extends Schema.Schema.Any,
  Item extends Schema.Schema.Any,
  Detail extends Schema.Schema.Any,
  P extends Schema.Schema.Any,
  C extends Schema.Schema.Any,
  U extends Schema.Schema.Any
> = WithConflict<
  R extends "list" ? ReturnType<typeof listOf<Q, Item>>
  : R extends "create" ? ReturnType<typeof createIn<C, Detail>>
  : R extends "get" ? ReturnType<typeof getById<P, Detail>>
  : R extends "update" ? ReturnType<typeof updateById<P, U, Detail>>
  : ReturnType<typeof deleteById<P, Detail>>,
  R extends K ? true : false
>

type WithConflict<E, On extends boolean> = On extends false ? E
  : E extends HttpApiEndpoint.HttpApiEndpoint<infer N, infer M, infer Pa, infer Ur, infer Pl, infer H, infer S, infer Er, infer R, infer RE>
    ? HttpApiEndpoint.HttpApiEndpoint<N, M, Pa, Ur, Pl, H, S, Er | Schema.Schema.Type<typeof ConflictWire>, R, RE>
  : never

/**
 * A lab resource's routes from one table: `list` (GET path), `create` (POST
 * path, 201), `get`, `update` and `delete` (path/:id). A route is made when `docs`
 * names it, in that order (create and update need their payload
 * schema); `conflicts` names the routes that also answer 409. List items are
 * `item`; the others answer `detail` (default `item`). Add the group's own
 * routes after it, then `.pipe(labGroup)`.
 */
export const labResource = <
  const Name extends string,
  S extends Partial<Record<Route, RouteDoc>> & { readonly list: RouteDoc },
  Q extends Schema.Schema.Any,
  Item extends Schema.Schema.Any,
  P extends Schema.Schema.Any,
  C extends Schema.Schema.Any = never,
  U extends Schema.Schema.Any = never,
  Detail extends Schema.Schema.Any = Item,
  const K extends Route = never
>(
  name: Name,
  spec: {
    readonly path: Path
    readonly params: PathParams<P> & { readonly fields: Schema.Struct.Fields }
    readonly query: UrlParams<Q>
    readonly item: Item
    readonly detail?: Detail
    readonly create?: C
    readonly update?: U
    readonly docs: S
    readonly conflicts?: ReadonlyArray<K>
  }
) => {
  const { path, params, query, item, docs } = spec
  const detail = spec.detail ?? item
  const one: Path = `${path}/:${Object.keys(params.fields)[0]}`
  const { create, update } = spec
  const made: Record<Route, ((doc: RouteDoc, conflict: boolean) => HttpApiEndpoint.HttpApiEndpoint.Any) | undefined> = {
    list: (doc, conflict) => described(listOf(path, query, item), doc, conflict),
    create: create && ((doc, conflict) => described(createIn(path, create, detail), doc, conflict)),
    get: (doc, conflict) => described(getById(one, params, detail), doc, conflict),
    update: update && ((doc, conflict) => described(updateById(one, params, update, detail), doc, conflict)),
    delete: (doc, conflict) => described(deleteById(one, params, detail), doc, conflict)
  }
  const routes: ReadonlyArray<Route> = ["list", "create", "get", "update", "delete"]
  let group: HttpApiGroup.HttpApiGroup<Name, HttpApiEndpoint.HttpApiEndpoint.Any, never> = HttpApiGroup.make(name)
  for (const route of routes) {
    const doc = docs[route]
    const make = made[route]
    if (doc === undefined) continue
    if (make === undefined) throw new Error(`labResource ${name}: the ${route} route needs its payload schema`)
    group = group.add(make(doc, spec.conflicts?.some((c) => c === route) ?? false))
  }
  // The loop adds exactly the routes named in `docs`, typed per route above.
  return group as unknown as HttpApiGroup.HttpApiGroup<
    Name,
    { [R in Route & keyof S]: RouteEndpoint<R, K, Q, Item, Detail, P, C, U> }[Route & keyof S]
  >
}
