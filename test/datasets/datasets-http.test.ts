import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { Dataset } from "../../src/datasets/Dataset.js"
import { Lab } from "../../src/labs/Lab.js"
import { data, expectError, page } from "../support/http.js"
import { type Fixture, queryOf, startFixture } from "../support/LabFixture.js"
import { expectGuardedOnEveryRoute, expectMissingOnEveryRoute } from "../support/RouteChecks.js"

let fx: Fixture
let lab: Lab
let writer: { readonly id: string; readonly key: string }
let readerKey: string

type Body = Record<string, unknown>

const call = (method: string, path: string, json?: Body, token = writer.key) => fx.call(method, path, json, token)

const q = queryOf

const post = (json: Body, token = writer.key) => call("POST", "/api/v1/datasets", { labId: lab.id, ...json }, token)
const patch = (id: string, json: Body) => call("PATCH", `/api/v1/datasets/${id}`, { labId: lab.id, ...json })
const create = async (json: Body) => data(await post(json), Dataset, 201)
const list = async (params: Record<string, string | number | undefined> = {}) =>
  page(await call("GET", `/api/v1/datasets?${q({ labId: lab.id, ...params })}`), Dataset)

const activityOf = async (ref: string) => {
  const result = await page(await call("GET", `/api/v1/activity?${q({ labId: lab.id, limit: 100 })}`), Activity)
  return result.data.filter((e) => e.ref === ref).reverse()
}

beforeAll(async () => {
  fx = await startFixture("datasets")
  lab = fx.lab
  writer = { id: fx.writerId, key: fx.writer }
  readerKey = fx.reader
})
afterAll(() => fx.close())

describe("datasets", () => {
  it("registers a dataset at a uri or at a lab path (201, version 1) and reads it back", async () => {
    const imagenet = await create({
      name: "ImageNet-1k",
      description: "ILSVRC 2012",
      uri: "s3://datasets/imagenet/train/",
      format: "webdataset",
      sizeBytes: 147_897_477_120,
      rows: 1_281_167,
      tags: ["vision", "classification"]
    })
    expect(imagenet).toMatchObject({
      labId: lab.id,
      name: "ImageNet-1k",
      description: "ILSVRC 2012",
      uri: "s3://datasets/imagenet/train/",
      path: null,
      format: "webdataset",
      sizeBytes: 147_897_477_120,
      rows: 1_281_167,
      version: 1,
      tags: ["vision", "classification"]
    })
    expect(imagenet.id).toMatch(/^ds_/)
    const local = await create({ name: "labels", path: "/data/./labels.csv", format: "csv" })
    expect(local).toMatchObject({ uri: null, path: "/data/labels.csv", sizeBytes: null, rows: null, description: "", tags: [], version: 1 })
    await create({ name: "gcs", uri: "gs://bucket/object.parquet", format: "parquet" })
    await create({ name: "web", uri: "https://example.org/d.jsonl", format: "jsonl" })

    expect(await data(await call("GET", `/api/v1/datasets/${imagenet.id}?labId=${lab.slug}`, undefined, readerKey), Dataset)).toEqual(imagenet)
    expect((await activityOf(imagenet.id)).map((e) => [e.kind, e.actor])).toEqual([["dataset.created", writer.id]])
  })

  it("lists newest first, filters by format, tag and date, and paginates", async () => {
    const a = await create({ name: "list-a", uri: "https://example.org/a.csv", format: "csv", tags: ["nlp"] })
    const before = a.createdAt.toISOString()
    const b = await create({ name: "list-b", uri: "https://example.org/b.parquet", format: "parquet", tags: ["nlp", "big"] })
    const c = await create({ name: "list-c", uri: "https://example.org/c.csv", format: "csv" })
    expect((await list({ from: before })).data.map((d) => d.id)).toEqual([c.id, b.id, a.id])
    expect((await list({ from: before, format: "csv" })).data.map((d) => d.id)).toEqual([c.id, a.id])
    expect((await list({ from: before, tag: "nlp" })).data.map((d) => d.id)).toEqual([b.id, a.id])
    expect((await list({ from: before, tag: "big" })).data.map((d) => d.id)).toEqual([b.id])
    expect((await list({ to: before, tag: "big" })).data).toEqual([])
    const first = await list({ from: before, limit: 2 })
    expect(first.data.map((d) => d.id)).toEqual([c.id, b.id])
    const second = await list({ from: before, limit: 2, cursor: first.meta.next_cursor ?? undefined })
    expect(second.data.map((d) => d.id)).toEqual([a.id])
    expect(second.meta).toMatchObject({ has_more: false, next_cursor: null })
  })

  it("PATCH: metadata keeps the version, a content change raises it, a new location replaces the old", async () => {
    const d = await create({ name: "evolving", uri: "https://example.org/v1.csv", format: "csv", rows: 10 })
    const renamed = await data(await patch(d.id, { name: "evolving-data", description: "now described", tags: ["x"] }), Dataset)
    expect(renamed).toMatchObject({ name: "evolving-data", description: "now described", tags: ["x"], version: 1 })
    const grown = await data(await patch(d.id, { rows: 20, sizeBytes: 2048 }), Dataset)
    expect(grown).toMatchObject({ rows: 20, sizeBytes: 2048, version: 2 })
    const moved = await data(await patch(d.id, { path: "/data/evolving.parquet", format: "parquet" }), Dataset)
    expect(moved).toMatchObject({ uri: null, path: "/data/evolving.parquet", format: "parquet", version: 3 })
    const back = await data(await patch(d.id, { uri: "s3://b/evolving.parquet" }), Dataset)
    expect(back).toMatchObject({ uri: "s3://b/evolving.parquet", path: null, version: 4 })
    const unknownSize = await data(await patch(d.id, { sizeBytes: null }), Dataset)
    expect(unknownSize).toMatchObject({ sizeBytes: null, version: 5 })
    // the same values: nothing changes, no entry
    expect(await data(await patch(d.id, { rows: 20, format: "parquet" }), Dataset)).toEqual(unknownSize)
    const entries = await activityOf(d.id)
    expect(entries.map((e) => e.kind)).toEqual(["dataset.created", ...Array.from({ length: 5 }, () => "dataset.updated")])
    expect(entries.map((e) => e.data["changed"])).toEqual([
      undefined,
      ["name", "description", "tags"],
      ["sizeBytes", "rows"],
      ["uri", "path", "format"],
      ["uri", "path"],
      ["sizeBytes"]
    ])
    expect(entries.at(-1)?.data["version"]).toBe(5)
  })

  it("a name is unique in the lab, ignoring case: 409", async () => {
    const d = await create({ name: "Unique Name", uri: "https://example.org/u.csv", format: "csv" })
    expect(await expectError(await post({ name: "unique name", uri: "https://example.org/v.csv", format: "csv" }), 409, "conflict")).toMatch(
      /a dataset named unique name exists/
    )
    const e = await create({ name: "Another", uri: "https://example.org/w.csv", format: "csv" })
    await expectError(await patch(e.id, { name: "UNIQUE NAME" }), 409, "conflict")
    // renaming itself with another case is fine
    expect((await data(await patch(d.id, { name: "unique NAME" }), Dataset)).name).toBe("unique NAME")
  })

  it("DELETE answers with the dataset, writes an entry, and the id is gone", async () => {
    const d = await create({ name: "doomed", uri: "https://example.org/d.csv", format: "csv" })
    expect(await data(await call("DELETE", `/api/v1/datasets/${d.id}?labId=${lab.id}`), Dataset)).toEqual(d)
    await expectError(await call("GET", `/api/v1/datasets/${d.id}?labId=${lab.id}`), 404, "not_found")
    expect((await activityOf(d.id)).map((e) => e.kind)).toEqual(["dataset.created", "dataset.deleted"])
    // the name is free again
    await create({ name: "doomed", uri: "https://example.org/d.csv", format: "csv" })
  })
})

describe("errors on every route", () => {
  const routes = (id: string, labId: string) => [
    ["GET", `/api/v1/datasets?labId=${labId}`, undefined],
    ["POST", "/api/v1/datasets", { labId, name: `n-${Math.random()}`, uri: "https://example.org/x.csv", format: "csv" }],
    ["GET", `/api/v1/datasets/${id}?labId=${labId}`, undefined],
    ["PATCH", `/api/v1/datasets/${id}`, { labId, description: "d" }],
    ["DELETE", `/api/v1/datasets/${id}?labId=${labId}`, undefined]
  ] as const

  it("422 for invalid bodies and queries, naming the field", async () => {
    const ok = { name: "valid", uri: "https://example.org/x.csv", format: "csv" }
    const bad = async (json: Body, message: RegExp) => expect(await expectError(await post({ ...ok, ...json }), 422, "validation_error")).toMatch(message)
    await bad({ path: "/data/x.csv" }, /^uri: give either uri or path, not both$/)
    await bad({ uri: undefined }, /^uri: give either uri \(outside the lab\) or path/)
    await bad({ uri: "ftp://example.org/x.csv" }, /uri: must be an http\(s\):\/\/, s3:\/\/ or gs:\/\/ URL/)
    await bad({ uri: "not a url" }, /uri: must be an absolute URL/)
    await bad({ uri: "https://user:secret@example.org/x.csv" }, /uri: must not carry credentials/)
    await bad({ uri: undefined, path: "data/x.csv" }, /path: must start with \//)
    await bad({ format: "CSV" }, /format: must be a lowercase format name/)
    await bad({ sizeBytes: -1 }, /sizeBytes/)
    await bad({ rows: 1.5 }, /rows/)
    await bad({ version: "2.0.0" }, /version is not a known field/)
    await bad({ id: "ds_mine" }, /id is not a known field/)
    await bad({ createdAt: "2020-01-01T00:00:00Z" }, /createdAt is not a known field/)
    await bad({ tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, /tags/)
    await bad({ tags: ["x".repeat(65)] }, /tags\.0/)
    await bad({ name: "" }, /name/)
    await bad({ description: "x".repeat(10_001) }, /description/)

    const d = await create({ name: "patched", uri: "https://example.org/p.csv", format: "csv" })
    expect(await expectError(await patch(d.id, { version: 9 }), 422, "validation_error")).toMatch(/version is not a known field/)
    expect(await expectError(await patch(d.id, { uri: "s3://b/k", path: "/k" }), 422, "validation_error")).toMatch(/^uri: give either uri or path, not both$/)
    expect(await expectError(await patch(d.id, { uri: null }), 422, "validation_error")).toMatch(/uri/)
    expect(await expectError(await call("GET", `/api/v1/datasets?${q({ labId: lab.id, limit: 0 })}`), 422, "validation_error")).toMatch(/limit/)
    expect(await expectError(await call("GET", `/api/v1/datasets?${q({ labId: lab.id, format: "Not Valid" })}`), 422, "validation_error")).toMatch(/format/)
  })

  it("404 for a missing dataset, and for the operator naming a missing lab", async () => {
    await expectMissingOnEveryRoute(fx, routes, "ds_missing", /no dataset ds_missing/)
  })

  it("403 for a foreign lab on every route, and for a read-only key writing", async () => {
    const d = await create({ name: "guarded", uri: "https://example.org/g.csv", format: "csv" })
    await expectGuardedOnEveryRoute(fx, routes, d.id)
  })
})
