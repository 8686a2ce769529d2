/**
 * The fixture of the resource end-to-end tests: a server with two labs
 * (`<prefix>-lab` and `<prefix>-other`) and keys of each kind, JSON calls, the
 * activity feed, list walking and polling. On in-memory PGlite; with
 * E2E_DATABASE_URL (postgres://…) on PostgreSQL, in a fresh schema of its own
 * that is dropped at the end.
 */
import { Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, expect } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { CreatedApiKey } from "../../src/auth/ApiKey.js"
import { Lab } from "../../src/labs/Lab.js"
import { data, expectError, page } from "./http.js"
import { startTestServer, type TestServer } from "./TestServer.js"

export type Params = Record<string, string | number | undefined>

/** A query string of the defined params (no leading `?`). */
export const queryOf = (params: Params): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value))
  return search.toString()
}

export const withQuery = (path: string, params: Params = {}) => {
  const query = queryOf(params)
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
  readonly readerId: string
  readonly admin: string
  readonly get: (path: string, params?: Params, token?: string) => Promise<Response>
  readonly del: (path: string, params?: Params, token?: string) => Promise<Response>
  readonly post: (path: string, json: unknown, token?: string) => Promise<Response>
  readonly patch: (path: string, json: unknown, token?: string) => Promise<Response>
  /** Any method, with a JSON body when one is given; the writer's key unless another token is. */
  readonly call: (method: string, path: string, json?: unknown, token?: string) => Promise<Response>
  /** The lab's activity entries, newest first (first page of 100). */
  readonly activity: (labId?: string) => Promise<ReadonlyArray<Activity>>
  /** A team-plan lab the operator creates, and a key with one scope (`lab:<slug>:rw`, say). */
  readonly createLab: (slug: string) => Promise<Lab>
  readonly createKey: (scope: string) => Promise<typeof CreatedApiKey.Type>
  readonly close: () => Promise<void>
}

export interface KeyRequest {
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly expiresAt?: string
}

/**
 * The calls that set a test's stage, as the operator (or whoever holds `token`) makes them: a lab (team plan unless
 * said) and a key (one scope, or a full request). Every end-to-end test creates its labs and keys through these.
 */
export const operatorOf = (server: Pick<TestServer, "request" | "adminKey">, token = server.adminKey) => ({
  createLab: async (slug: string, plan: "free" | "pro" | "team" = "team") =>
    data(await server.request("POST", "/api/v1/labs", { token, json: { slug, name: `Lab ${slug}`, plan } }), Lab, 201),
  createKey: async (request: string | KeyRequest) =>
    data(
      await server.request("POST", "/api/v1/auth/keys", {
        token,
        json: typeof request === "string" ? { name: request, scopes: [request] } : request
      }),
      CreatedApiKey,
      201
    )
})

/** Settings for a fresh PostgreSQL schema at `url` (dropped by `drop`); none (in-memory PGlite) without a url. */
export const freshDatabase = async (
  url: string | undefined
): Promise<{
  readonly settings: Parameters<typeof startTestServer>[0]
  /** the schema's own URL (for a service process), when there is one */
  readonly url?: string
  readonly drop: () => Promise<void>
}> => {
  if (url === undefined || url === "") return { settings: {}, drop: async () => {} }
  const schema = `test_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(sql)
    await client.end()
  }
  await run(`CREATE SCHEMA "${schema}"`)
  const scoped = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`
  return {
    settings: { database: { kind: "postgresql", url: Redacted.make(scoped) } },
    url: scoped,
    drop: () => run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  }
}

/** The server on E2E_DATABASE_URL (or `databaseUrl`) when set, unless `overrides` names a database. */
export const startFixture = async (
  prefix: string,
  overrides: Parameters<typeof startTestServer>[0] = {},
  databaseUrl = process.env["E2E_DATABASE_URL"]
): Promise<Fixture> => {
  const db = await freshDatabase(overrides.database === undefined ? databaseUrl : undefined)
  const server = await startTestServer({ ...db.settings, ...overrides })
  const admin = server.adminKey
  const { createLab, createKey } = operatorOf(server)
  const lab = await createLab(`${prefix}-lab`)
  const other = await createLab(`${prefix}-other`)
  const writer = await createKey(`lab:${lab.slug}:rw`)
  const reader = await createKey(`lab:${lab.slug}:r`)
  const stranger = await createKey(`lab:${other.slug}:rw`)
  return {
    server,
    lab,
    other,
    writer: writer.key,
    reader: reader.key,
    stranger: stranger.key,
    writerId: writer.id,
    readerId: reader.id,
    admin,
    get: (path, params, token = writer.key) => server.request("GET", withQuery(path, params), { token }),
    del: (path, params, token = writer.key) => server.request("DELETE", withQuery(path, params), { token }),
    post: (path, json, token = writer.key) => server.request("POST", path, { token, json }),
    patch: (path, json, token = writer.key) => server.request("PATCH", path, { token, json }),
    call: (method, path, json, token = writer.key) =>
      server.request(method, path, json === undefined ? { token } : { token, json }),
    createLab,
    createKey,
    activity: async (labId = lab.id) =>
      (await page(await server.request("GET", withQuery("/api/v1/activity", { labId, limit: 100 }), { token: admin }), Activity)).data,
    close: async () => {
      await server.close()
      await db.drop()
    }
  }
}

/**
 * Start a fixture before the file's tests (`set` receives it) and close it after them:
 * `let fx: Fixture` then `useFixture(() => startFixture("tasks"), (started) => (fx = started))`.
 */
export const useFixture = <F extends { readonly close: () => Promise<void> }>(
  start: () => Promise<F>,
  set: (fixture: F) => void,
  timeoutMs?: number
) => {
  let started: F | undefined
  beforeAll(async () => {
    started = await start()
    set(started)
  }, timeoutMs)
  afterAll(() => started?.close())
}

/** Anything with an id: what a create answers, an item of a list. */
export const WithId = Schema.Struct({ id: Schema.String })

/** POST `body` to `path` in `labId` (the fixture's lab) as `token` (the writer), expecting 201: the new record's id. */
export const createdId = async (fx: Fixture, path: string, body: Record<string, unknown>, labId = fx.lab.id, token?: string) =>
  (await data(await fx.post(path, { labId, ...body }, token), WithId, 201)).id

/**
 * PATCH a record under `collection` (`/api/v1/surveys`, say) in the fixture's lab, as `token` (the writer).
 * `fixture` reads the file's fixture when called, since it starts after the module loads.
 */
export const patchIn = (fixture: () => Fixture, collection: string) => (id: string, body: Record<string, unknown>, token?: string) =>
  fixture().patch(`${collection}/${id}`, { labId: fixture().lab.id, ...body }, token)

/** Expect a 422 whose message names `field`. */
export const expectInvalid = async (response: Response, field: string) => {
  const message = await expectError(response, 422, "validation_error")
  expect(message).toContain(field)
  return message
}

/** The newest activity entry of this kind about this ref. */
export const findActivity = (entries: ReadonlyArray<Activity>, kind: string, ref: string) => {
  const entry = entries.find((e) => e.kind === kind && e.ref === ref)
  expect(entry, `activity ${kind} for ${ref} in ${JSON.stringify(entries.map((e) => [e.kind, e.ref]))}`).toBeDefined()
  if (entry === undefined) throw new Error("unreachable")
  return entry
}

/** Every item of a list, walked page by page with `limit`. */
export const walk = async <A, I>(fx: Fixture, path: string, params: Params, item: Schema.Schema<A, I>, limit = 2) => {
  const all: Array<A> = []
  let cursor: string | undefined
  for (let guard = 0; guard < 500; guard++) {
    const result = await page(await fx.get(path, { ...params, limit, cursor }), item)
    all.push(...result.data)
    expect(result.meta.has_more).toBe(result.meta.next_cursor !== null)
    if (result.meta.next_cursor === null) return all
    cursor = result.meta.next_cursor
  }
  throw new Error("the list never ended")
}

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Poll until `check` returns a value (background work), or fail after `timeoutMs`. */
export const eventually = async <A>(check: () => Promise<A | undefined>, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await sleep(50)
  }
}

/** Poll `read` until `done` holds; the last value. */
export const waitFor = async <A>(what: string, read: () => Promise<A>, done: (a: A) => boolean, timeoutMillis = 10_000): Promise<A> => {
  const deadline = Date.now() + timeoutMillis
  let last = await read()
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`)
    await sleep(50)
    last = await read()
  }
  return last
}

export const MISSING = "nope_0000000000000000"
export { data, expectError, page }
