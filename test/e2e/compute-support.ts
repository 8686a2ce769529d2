/**
 * Helpers for the end-to-end tests of experiments, pods and costs: a server
 * with two labs and keys of each kind, JSON calls, the activity feed, polling,
 * and OS process checks for pods run as local processes.
 */
import { Redacted, Schema } from "effect"
import { expect } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { CreatedApiKey } from "../../src/auth/ApiKey.js"
import { Experiment } from "../../src/experiments/Experiment.js"
import { Lab } from "../../src/labs/Lab.js"
import { Pod, type PodStatus } from "../../src/pods/Pod.js"
import type * as App from "../../layers/App.js"
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
  readonly lab: Lab
  readonly other: Lab
  /** read-write and read-only keys on `lab`; a read-write key on `other` only. */
  readonly writer: string
  readonly reader: string
  readonly stranger: string
  readonly writerId: string
  readonly admin: string
  readonly get: (path: string, params?: Params, token?: string) => Promise<Response>
  readonly del: (path: string, params?: Params, token?: string) => Promise<Response>
  readonly post: (path: string, json: unknown, token?: string) => Promise<Response>
  readonly patch: (path: string, json: unknown, token?: string) => Promise<Response>
  readonly activity: (labId?: string) => Promise<ReadonlyArray<Activity>>
  readonly close: () => Promise<void>
}

/**
 * A fresh server with labs `<prefix>-lab` and `<prefix>-other`. On in-memory
 * PGlite by default; with COMPUTE_E2E_DATABASE_URL (a throw-away PostgreSQL
 * database) on PostgreSQL. Lab slugs differ per file, so files can share it once.
 */
export const startFixture = async (prefix: string, overrides: Partial<App.AppSettings> = {}): Promise<Fixture> => {
  const postgres = process.env["COMPUTE_E2E_DATABASE_URL"]
  const server = await startTestServer({
    ...(postgres ? { database: { kind: "postgresql" as const, url: Redacted.make(postgres) } } : {}),
    ...overrides
  })
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
  return {
    server,
    lab,
    other,
    writer: writer.key,
    reader: reader.key,
    stranger: stranger.key,
    writerId: writer.id,
    admin,
    get: (path, params, token = writer.key) => server.request("GET", withQuery(path, params), { token }),
    del: (path, params, token = writer.key) => server.request("DELETE", withQuery(path, params), { token }),
    post: (path, json, token = writer.key) => server.request("POST", path, { token, json }),
    patch: (path, json, token = writer.key) => server.request("PATCH", path, { token, json }),
    activity: async (labId = lab.id) =>
      (await page(await server.request("GET", withQuery("/api/v1/activity", { labId, limit: 100 }), { token: admin }), Activity)).data,
    close: () => server.close()
  }
}

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

/** Every item of a list, walked page by page. */
export const walk = async <A, I>(fx: Fixture, path: string, params: Params, item: Schema.Schema<A, I>, limit = 2) => {
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

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Poll `read` until `done` holds (10 s at most); the last value. */
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

/** Does an OS process with this id exist? (signal 0 checks without sending anything) */
export const processExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "EPERM") return true
    return false
  }
}

export const pidOf = (pod: Pod): number => {
  expect(pod.providerRef).toMatch(/^\d+$/)
  return Number(pod.providerRef)
}

// --- pods and experiments

export const PODS = "/api/v1/pods"
export const EXPERIMENTS = "/api/v1/experiments"

export const createPod = async (fx: Fixture, body: Record<string, unknown> = {}, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(PODS, { labId, name: "pod", costPerHour: 1.5, ...body }, token), Pod, 201)

export const getPod = async (fx: Fixture, id: string, labId = fx.lab.id) => data(await fx.get(`${PODS}/${id}`, { labId }), Pod)

export const waitForPod = (fx: Fixture, id: string, status: PodStatus, labId = fx.lab.id, timeoutMillis?: number) =>
  waitFor(`pod ${id} to be ${status}`, () => getPod(fx, id, labId), (p) => p.status === status, timeoutMillis)

export const startPod = async (fx: Fixture, id: string, labId = fx.lab.id) =>
  data(await fx.post(`${PODS}/${id}/start`, { labId }), Pod, 202)

export const stopPod = async (fx: Fixture, id: string, labId = fx.lab.id) => data(await fx.post(`${PODS}/${id}/stop`, { labId }), Pod, 202)

/** A pod that is running (started and observed). */
export const runningPod = async (fx: Fixture, body: Record<string, unknown> = {}) => {
  const pod = await createPod(fx, body)
  await startPod(fx, pod.id)
  return waitForPod(fx, pod.id, "running")
}

export const getExperiment = async (fx: Fixture, id: string, labId = fx.lab.id) =>
  data(await fx.get(`${EXPERIMENTS}/${id}`, { labId }), Experiment)

export const waitForExperiment = (fx: Fixture, id: string, done: (e: Experiment) => boolean, what: string) =>
  waitFor(`experiment ${id} ${what}`, () => getExperiment(fx, id), done)

export const MISSING = "nope_0000000000000000"
export { data, expectError, page }
