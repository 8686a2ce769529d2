/**
 * Helpers shared by the end-to-end tests of the research resources owned here
 * (agents, memory, knowledge, surveys, standups, projects, chats): a server with
 * two labs and keys of each kind, JSON calls, and the activity feed.
 *
 * On in-memory PGlite by default. With RESEARCH_E2E_DATABASE_URL (a PostgreSQL URL,
 * ideally with `options=-c search_path=<fresh schema>`) the same tests run on PostgreSQL;
 * lab slugs differ per file, so the files can share one schema (run each once per schema).
 */
import { Redacted, Schema } from "effect"
import { expect } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { CreatedApiKey } from "../../src/auth/ApiKey.js"
import { Lab } from "../../src/labs/Lab.js"
import { data, expectError, page } from "../support/http.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

export type Params = Record<string, string | number | undefined>

export const withQuery = (path: string, params: Params = {}) => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value))
  const query = search.toString()
  return query === "" ? path : `${path}?${query}`
}

export interface Fixture {
  readonly server: TestServer
  /** The lab under test and another one. */
  readonly lab: Lab
  readonly other: Lab
  /** Keys: read-write and read-only on `lab`; read-write on `other` only (a stranger to `lab`). */
  readonly writer: string
  readonly reader: string
  readonly stranger: string
  readonly writerId: string
  readonly get: (path: string, params?: Params, token?: string) => Promise<Response>
  readonly del: (path: string, params?: Params, token?: string) => Promise<Response>
  readonly post: (path: string, json: unknown, token?: string) => Promise<Response>
  readonly patch: (path: string, json: unknown, token?: string) => Promise<Response>
  /** The lab's activity entries, newest first (first page of 100). */
  readonly activity: (labId?: string) => Promise<ReadonlyArray<Activity>>
  readonly close: () => Promise<void>
}

/** A fresh server on in-memory PGlite with labs `<prefix>-lab` and `<prefix>-other`. */
export const startFixture = async (prefix: string): Promise<Fixture> => {
  const postgres = process.env["RESEARCH_E2E_DATABASE_URL"]
  const server = await startTestServer(
    postgres ? { database: { kind: "postgresql", url: Redacted.make(postgres) } } : {}
  )
  const admin = server.adminKey
  const createLab = async (slug: string) =>
    data(await server.request("POST", "/api/v1/labs", { token: admin, json: { slug, name: `Lab ${slug}`, plan: "team" } }), Lab, 201)
  const createKey = async (scope: string) =>
    data(await server.request("POST", "/api/v1/auth/keys", { token: admin, json: { name: scope, scopes: [scope] } }), CreatedApiKey, 201)
  const lab = await createLab(`${prefix}-lab`)
  const other = await createLab(`${prefix}-other`)
  const writer = await createKey(`lab:${lab.slug}:rw`)
  const reader = await createKey(`lab:${lab.slug}:r`)
  const stranger = await createKey(`lab:${other.slug}:rw`)
  const fixture: Fixture = {
    server,
    lab,
    other,
    writer: writer.key,
    reader: reader.key,
    stranger: stranger.key,
    writerId: writer.id,
    get: (path, params, token = writer.key) => server.request("GET", withQuery(path, params), { token }),
    del: (path, params, token = writer.key) => server.request("DELETE", withQuery(path, params), { token }),
    post: (path, json, token = writer.key) => server.request("POST", path, { token, json }),
    patch: (path, json, token = writer.key) => server.request("PATCH", path, { token, json }),
    activity: async (labId = lab.id) =>
      (await page(await server.request("GET", withQuery("/api/v1/activity", { labId, limit: 100 }), { token: admin }), Activity)).data,
    close: () => server.close()
  }
  return fixture
}

/** Expect a 422 whose message names `field`. */
export const expectInvalid = async (response: Response, field: string) => {
  const message = await expectError(response, 422, "validation_error")
  expect(message).toContain(field)
  return message
}

/** The activity entry of this kind about this ref (the newest). */
export const findActivity = (entries: ReadonlyArray<Activity>, kind: string, ref: string) => {
  const entry = entries.find((e) => e.kind === kind && e.ref === ref)
  expect(entry, `activity ${kind} for ${ref} in ${JSON.stringify(entries.map((e) => [e.kind, e.ref]))}`).toBeDefined()
  if (entry === undefined) throw new Error("unreachable")
  return entry
}

/** Every item of a list, walked page by page with `limit`. */
export const walk = async <A, I>(
  fx: Fixture,
  path: string,
  params: Params,
  item: Schema.Schema<A, I>,
  limit = 2
): Promise<ReadonlyArray<A>> => {
  const all: Array<A> = []
  let cursor: string | undefined
  for (let guard = 0; guard < 200; guard++) {
    const result = await page(await fx.get(path, { ...params, limit, cursor }), item)
    all.push(...result.data)
    expect(result.meta.has_more).toBe(result.meta.next_cursor !== null)
    if (result.meta.next_cursor === null) return all
    cursor = result.meta.next_cursor
  }
  throw new Error("the list never ended")
}

export const MISSING = "nope_0000000000000000"
export { data, expectError, page }
