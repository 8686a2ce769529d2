import { HttpApiEndpoint, type HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "./Envelope.js"
import { ForbiddenWire, NotFoundWire } from "./Errors.js"
import { PageParams } from "./Pagination.js"

/**
 * The endpoint shapes every lab resource shares: a page of items, create
 * (201), and one item by its path id (get, update, delete). Each builder
 * returns the HttpApiEndpoint with its literal name, so a group's handlers
 * still typecheck; the caller adds the summary and any route-specific errors.
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
