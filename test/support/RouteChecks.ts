/** Checks every lab resource's routes share: 404 for a missing id or lab, 403 for a foreign or read-only key. */
import type { Schema } from "effect"
import { expect } from "vitest"
import { data, expectError } from "./http.js"
import { type Fixture, findActivity } from "./LabFixture.js"

export type Route = readonly [method: string, path: string, json: unknown]
/** A resource's routes for resource `id` in lab `labId`; the first `collection` of them (list, create) name no resource. */
export type Routes = (id: string, labId: string) => ReadonlyArray<Route>

/** 404 naming `missing` on every route that names a resource, and 404 for the operator naming a missing lab on every route. */
export const expectMissingOnEveryRoute = async (fx: Fixture, routes: Routes, missing: string, message: RegExp, collection = 2) => {
  for (const [method, path, json] of routes(missing, fx.lab.id).slice(collection)) {
    expect(await expectError(await fx.call(method, path, json), 404, "not_found"), `${method} ${path}`).toMatch(message)
  }
  for (const [method, path, json] of routes(missing, "no-such-lab")) {
    await expectError(await fx.call(method, path, json, fx.admin), 404, "not_found")
  }
}

/** 403 on every route for a key of another lab; for the lab's read-only key, 200 on reads and 403 on writes. */
export const expectGuardedOnEveryRoute = async (fx: Fixture, routes: Routes, id: string) => {
  for (const [method, path, json] of routes(id, fx.lab.id)) {
    await expectError(await fx.call(method, path, json, fx.stranger), 403, "forbidden")
  }
  for (const [method, path, json] of routes(id, fx.lab.id)) {
    if (method === "GET") expect((await fx.call(method, path, json, fx.reader)).status).toBe(200)
    else await expectError(await fx.call(method, path, json, fx.reader), 403, "forbidden")
  }
}

/** A collection's list: 403 for a key of another lab, 404 for the operator naming a missing lab. */
export const expectListGuarded = async (fx: Fixture, path: string) => {
  await expectError(await fx.get(path, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
  await expectError(await fx.get(path, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
}

/** A collection's create: 403 for a key of another lab and for a read-only key, 404 for the operator naming a missing lab. */
export const expectCreateGuarded = async (fx: Fixture, path: string, body: Record<string, unknown>) => {
  await expectError(await fx.post(path, { labId: fx.lab.id, ...body }, fx.stranger), 403, "forbidden")
  await expectError(await fx.post(path, { labId: fx.lab.id, ...body }, fx.reader), 403, "forbidden")
  await expectError(await fx.post(path, { labId: "no-such-lab", ...body }, fx.admin), 404, "not_found")
}

/** DELETE `path/{id}` answers the item and records `kind`; then the item is gone (404 to read or delete). Returns that activity entry. */
export const expectDeletedThenGone = async <A extends { readonly id: string }, I>(fx: Fixture, path: string, item: A, schema: Schema.Schema<A, I>, kind: string) => {
  expect(await data(await fx.del(`${path}/${item.id}`, { labId: fx.lab.id }), schema)).toEqual(item)
  const activity = findActivity(await fx.activity(), kind, item.id)
  await expectError(await fx.get(`${path}/${item.id}`, { labId: fx.lab.id }), 404, "not_found")
  await expectError(await fx.del(`${path}/${item.id}`, { labId: fx.lab.id }), 404, "not_found")
  return activity
}
