import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { data, expectError, expectInvalid, type Fixture, MISSING, page, startFixture, walk } from "../support/LabFixture.js"

const Event = Schema.Struct({
  id: Schema.String,
  labId: Schema.String,
  batchId: Schema.String,
  name: Schema.String,
  value: Schema.Number,
  unit: Schema.NullOr(Schema.String),
  timestamp: Schema.String,
  attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  createdAt: Schema.String
})
const Batch = Schema.Struct({
  batchId: Schema.String,
  labId: Schema.String,
  accepted: Schema.Number,
  names: Schema.Array(Schema.String),
  from: Schema.String,
  to: Schema.String,
  receivedAt: Schema.String
})
const Aggregate = Schema.Struct({
  name: Schema.String,
  aggregate: Schema.String,
  bucket: Schema.NullOr(Schema.String),
  value: Schema.Number,
  count: Schema.Number,
  firstAt: Schema.String,
  lastAt: Schema.String
})

const PATH = "/api/v1/telemetry"
let fx: Fixture

/** 2024-03-01T10:00Z plus `minutes`. */
const at = (minutes: number, seconds = 0) => new Date(Date.UTC(2024, 2, 1, 10, minutes, seconds)).toISOString()

const ingest = async (events: ReadonlyArray<Record<string, unknown>>, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(PATH, { labId, events }, token), Batch, 201)

beforeAll(async () => {
  fx = await startFixture("telemetry")
  // train.loss: minute 0 → 4, 3, minute 1 → 2, 1; hour 11 → 0.5; gpu.util in minute 0
  await ingest([
    { name: "train.loss", value: 4, timestamp: at(0, 10), unit: "nats", attributes: { step: 1, run: "a" } },
    { name: "train.loss", value: 3, timestamp: at(0, 40), attributes: { step: 2, run: "a" } },
    { name: "train.loss", value: 2, timestamp: at(1, 5), attributes: { step: 3, run: "a" } },
    { name: "train.loss", value: 1, timestamp: at(1, 50), attributes: { step: 4, run: "a", final: true, note: null } },
    { name: "train.loss", value: 0.5, timestamp: at(70) },
    { name: "gpu/0/util", value: 90, unit: "%", timestamp: at(0, 30) }
  ])
}, 180_000)
afterAll(() => fx.close())

describe("POST /api/v1/telemetry", () => {
  it("stores a batch in one go (201) and says what it took, with one activity entry", async () => {
    const before = Date.now()
    const batch = await ingest([
      { name: "eval.accuracy", value: 0.91, unit: "ratio", attributes: { split: "test", n: 1000 } },
      { name: "eval.accuracy", value: 0.93 }
    ])
    expect(batch).toMatchObject({ labId: fx.lab.id, accepted: 2, names: ["eval.accuracy"] })
    expect(batch.batchId).toMatch(/^telb_/)
    // no timestamp: the time it was received
    expect(Date.parse(batch.from)).toBeGreaterThanOrEqual(before - 1000)
    expect(batch.from).toBe(batch.to)

    const stored = await page(await fx.get(PATH, { labId: fx.lab.slug, name: "eval.accuracy" }), Event)
    expect(stored.data.map((e) => e.value).sort()).toEqual([0.91, 0.93])
    const first = stored.data.find((e) => e.value === 0.91)
    expect(first).toMatchObject({ labId: fx.lab.id, batchId: batch.batchId, unit: "ratio", attributes: { split: "test", n: 1000 } })
    expect(stored.data.find((e) => e.value === 0.93)).toMatchObject({ unit: null, attributes: {} })

    const entry = (await fx.activity()).find((a) => a.kind === "telemetry.ingested" && a.ref === batch.batchId)
    expect(entry).toMatchObject({ actor: fx.writerId, data: { count: 2, names: ["eval.accuracy"] } })
  })

  it("takes 1,000 events in a batch, not 1,001", async () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({ name: "bulk.metric", value: i, timestamp: at(200, i % 60) }))
    expect((await ingest(events)).accepted).toBe(1000)
    const counted = await page(await fx.get(PATH, { labId: fx.lab.id, name: "bulk.metric", aggregate: "count" }), Aggregate)
    expect(counted.data).toEqual([expect.objectContaining({ name: "bulk.metric", value: 1000, count: 1000, bucket: null })])
    await expectInvalid(await fx.post(PATH, { labId: fx.lab.id, events: [...events, { name: "x", value: 1 }] }), "events")
  })

  it("answers 422 naming the field for unknown fields and bad values, and stores nothing", async () => {
    const lab = fx.lab.id
    const ok = { name: "m", value: 1 }
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [] }), "events")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [ok], extra: 1 }), "extra")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [ok, { ...ok, colour: "red" }] }), "events.1.colour")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ name: "m", value: "1" }] }), "events.0.value")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ value: 1 }] }), "events.0.name")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ name: "has space", value: 1 }] }), "events.0.name")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ name: "x".repeat(129), value: 1 }] }), "events.0.name")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ ...ok, timestamp: "yesterday" }] }), "events.0.timestamp")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ ...ok, unit: "u".repeat(33) }] }), "events.0.unit")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ ...ok, attributes: { nested: { a: 1 } } }] }), "events.0.attributes")
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ ...ok, attributes: { s: "v".repeat(257) } }] }), "events.0.attributes")
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))
    await expectInvalid(await fx.post(PATH, { labId: lab, events: [{ ...ok, attributes: many }] }), "events.0.attributes")
    await expectInvalid(await fx.post(PATH, { events: [ok] }), "labId")
    const none = await page(await fx.get(PATH, { labId: lab, name: "m" }), Event)
    expect(none.data).toEqual([])
  })

  it("answers 403 for a foreign lab and a read-only key, 404 for the operator on a missing lab", async () => {
    const events = [{ name: "m", value: 1 }]
    await expectError(await fx.post(PATH, { labId: fx.lab.id, events }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(PATH, { labId: fx.lab.id, events }, fx.reader), 403, "forbidden")
    await expectError(await fx.post(PATH, { labId: MISSING, events }, fx.server.adminKey), 404, "not_found")
  })
})

describe("GET /api/v1/telemetry", () => {
  it("lists raw events of a name in a time range, newest first, page by page", async () => {
    const all = await walk(fx, PATH, { labId: fx.lab.id, name: "train.loss" }, Event, 2)
    expect(all.map((e) => e.value)).toEqual([0.5, 1, 2, 3, 4])
    expect(all[1]).toMatchObject({ attributes: { step: 4, run: "a", final: true, note: null } })
    expect(all[4]).toMatchObject({ unit: "nats", timestamp: at(0, 10) })

    // from inclusive, to exclusive
    const range = await page(await fx.get(PATH, { labId: fx.lab.id, name: "train.loss", from: at(0, 40), to: at(1, 50) }), Event)
    expect(range.data.map((e) => e.value)).toEqual([2, 3])
    // without a name: every metric in the range
    const minute0 = await page(await fx.get(PATH, { labId: fx.lab.id, from: at(0), to: at(1) }), Event)
    expect(minute0.data.map((e) => e.name)).toEqual(["train.loss", "gpu/0/util", "train.loss"])
  })

  it("aggregates per bucket: avg, sum, min, max, count by minute and hour", async () => {
    const lab = fx.lab.id
    const byMinute = async (aggregate: string) =>
      (await page(await fx.get(PATH, { labId: lab, name: "train.loss", aggregate, bucket: "minute", to: at(60) }), Aggregate)).data
    expect((await byMinute("avg")).map((b) => [b.bucket, b.value, b.count])).toEqual([
      [at(1), 1.5, 2],
      [at(0), 3.5, 2]
    ])
    expect((await byMinute("sum")).map((b) => b.value)).toEqual([3, 7])
    expect((await byMinute("min")).map((b) => b.value)).toEqual([1, 3])
    expect((await byMinute("max")).map((b) => b.value)).toEqual([2, 4])
    expect((await byMinute("count")).map((b) => b.value)).toEqual([2, 2])
    const first = (await byMinute("avg"))[1]
    expect(first).toMatchObject({ name: "train.loss", aggregate: "avg", firstAt: at(0, 10), lastAt: at(0, 40) })

    const byHour = await page(await fx.get(PATH, { labId: lab, name: "train.loss", aggregate: "max", bucket: "hour", to: at(120) }), Aggregate)
    expect(byHour.data.map((b) => [b.bucket, b.value])).toEqual([
      [at(60), 0.5],
      [at(0), 4]
    ])
    const byDay = await page(await fx.get(PATH, { labId: lab, name: "train.loss", aggregate: "count", bucket: "day", to: at(120) }), Aggregate)
    expect(byDay.data.map((b) => [b.bucket, b.value])).toEqual([[new Date(Date.UTC(2024, 2, 1)).toISOString(), 5]])
  })

  it("aggregates the whole range per name without a bucket, and pages buckets too", async () => {
    const lab = fx.lab.id
    const perName = await page(await fx.get(PATH, { labId: lab, aggregate: "max", from: at(0), to: at(120) }), Aggregate)
    expect(perName.data.map((b) => [b.name, b.value, b.count, b.bucket])).toEqual([
      ["gpu/0/util", 90, 1, null],
      ["train.loss", 4, 5, null]
    ])
    const buckets = await walk(fx, PATH, { labId: lab, aggregate: "count", bucket: "minute", from: at(0), to: at(120) }, Aggregate, 1)
    expect(buckets.map((b) => [b.bucket, b.name, b.value])).toEqual([
      [at(70), "train.loss", 1],
      [at(1), "train.loss", 2],
      [at(0), "gpu/0/util", 1],
      [at(0), "train.loss", 2]
    ])
  })

  it("adds values near the largest double without overflowing: a sum past it is reported as it", async () => {
    const lab = fx.lab.id
    const when = at(500)
    await ingest([
      { name: "huge", value: 1.7e308, timestamp: when },
      { name: "huge", value: 1.7e308, timestamp: when },
      { name: "huge", value: -1e308, timestamp: when }
    ])
    const range = { labId: lab, name: "huge", from: when, to: at(501) }
    const sum = await page(await fx.get(PATH, { ...range, aggregate: "sum" }), Aggregate)
    expect(sum.data.map((b) => b.value)).toEqual([Number.MAX_VALUE])
    const avg = await page(await fx.get(PATH, { ...range, aggregate: "avg", bucket: "hour" }), Aggregate)
    // (1.7e308 + 1.7e308 - 1e308) / 3, which float8 cannot add up to
    expect(avg.data.map((b) => Math.abs(b.value / 8e307 - 1) < 1e-12)).toEqual([true])
  })

  it("keeps labs apart", async () => {
    await ingest([{ name: "train.loss", value: 99, timestamp: at(0, 20) }], fx.other.id, fx.stranger)
    const mine = await page(await fx.get(PATH, { labId: fx.lab.id, name: "train.loss", aggregate: "max", to: at(60) }), Aggregate)
    expect(mine.data[0]?.value).toBe(4)
    const theirs = await page(await fx.get(PATH, { labId: fx.other.id, name: "train.loss" }, fx.stranger), Event)
    expect(theirs.data.map((e) => e.value)).toEqual([99])
  })

  it("answers 422 for bad parameters", async () => {
    const lab = fx.lab.id
    await expectInvalid(await fx.get(PATH, { labId: lab, aggregate: "median" }), "aggregate")
    await expectInvalid(await fx.get(PATH, { labId: lab, aggregate: "avg", bucket: "week" }), "bucket")
    await expectInvalid(await fx.get(PATH, { labId: lab, bucket: "hour" }), "bucket")
    await expectInvalid(await fx.get(PATH, { labId: lab, from: at(10), to: at(0) }), "from")
    await expectInvalid(await fx.get(PATH, { labId: lab, from: "soon" }), "from")
    await expectInvalid(await fx.get(PATH, { labId: lab, name: "bad name" }), "name")
    await expectInvalid(await fx.get(PATH, { labId: lab, cursor: "garbage" }), "cursor")
    await expectInvalid(await fx.get(PATH, { labId: lab, limit: 101 }), "limit")
  })

  it("answers 403 for a foreign lab, 404 for the operator on a missing lab; a read-only key reads", async () => {
    await expectError(await fx.get(PATH, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.get(PATH, { labId: MISSING }, fx.server.adminKey), 404, "not_found")
    expect((await fx.get(PATH, { labId: fx.lab.id }, fx.reader)).status).toBe(200)
  })
})
