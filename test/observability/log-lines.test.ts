/**
 * The service's log lines as its logger writes them (layers/Logging.ts): a line's fields, given as the second part
 * of its message, are written as the line's annotations in every format, beside any the fiber carries; a cause stays
 * the line's cause. The deployment test reads the same lines from a real process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Console, Effect, Logger, LogLevel, Schema } from "effect"
import * as Logging from "../../layers/Logging.js"

const JsonLine = Schema.parseJson(
  Schema.Struct({
    message: Schema.Unknown,
    logLevel: Schema.String,
    annotations: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    cause: Schema.optional(Schema.String)
  })
)

/** What the logger writes to the console while `logging` runs, one entry a line. */
const written = (format: Logging.LogSettings["format"], logging: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    const current = yield* Effect.console
    const capturing: Console.Console = { ...current, unsafe: { ...current.unsafe, log: (line: unknown) => void lines.push(String(line)) } }
    yield* logging.pipe(Effect.provide(Logging.layer({ format, level: LogLevel.Info })), Effect.withConsole(capturing))
    return lines
  })

describe("log lines", () => {
  it.effect("a line's fields are its annotations in JSON, beside the fiber's own", () =>
    Effect.gen(function* () {
      const lines = yield* written(
        "json",
        Effect.logInfo("request", { request_id: "req_1", status: 200, duration_ms: 1.5 }).pipe(Effect.annotateLogs({ replica: "a" }))
      )
      expect(lines.map((line) => Schema.decodeUnknownSync(JsonLine)(line))).toEqual([
        { message: "request", logLevel: "INFO", annotations: { request_id: "req_1", status: 200, duration_ms: 1.5, replica: "a" } }
      ])
    }))

  it.effect("a cause stays the line's cause, its fields its annotations", () =>
    Effect.gen(function* () {
      const [line] = yield* written("json", Effect.logError("request failed with a defect", Cause.die(new Error("boom")), { request_id: "req_2" }))
      const decoded = Schema.decodeUnknownSync(JsonLine)(line)
      expect(decoded.message).toBe("request failed with a defect")
      expect(decoded.annotations).toEqual({ request_id: "req_2" })
      expect(decoded.cause).toContain("boom")
    }))

  it.effect("a message whose second part is not fields is written whole", () =>
    Effect.gen(function* () {
      const [line] = yield* written("json", Effect.logWarning("two", "parts"))
      expect(Schema.decodeUnknownSync(JsonLine)(line)).toEqual({ message: ["two", "parts"], logLevel: "WARN", annotations: {} })
    }))

  it.effect("an error beside the message is not taken for fields", () =>
    Effect.gen(function* () {
      const [line] = yield* written("json", Effect.logWarning("rate limit store failed; request allowed", new Error("ECONNREFUSED")))
      const decoded = Schema.decodeUnknownSync(JsonLine)(line)
      expect(decoded.message).toHaveLength(2)
      expect(decoded.annotations).toEqual({})
    }))

  it.effect("the request line says what Effect's own JSON logger says, spans included", () =>
    Effect.gen(function* () {
      const line = Effect.logInfo("request", { request_id: "req_3", method: "GET", route: "/api/v1/tasks", status: 200, duration_ms: 0.4 }).pipe(
        Effect.annotateLogs({ replica: "b" }),
        Effect.withLogSpan("handling")
      )
      const effects: Array<string> = []
      yield* line.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.map(Logging.withFields(Logger.jsonLogger), (l) => void effects.push(l)))))
      const [ours] = yield* written("json", line)
      const { timestamp: _, spans, ...rest } = JSON.parse(ours ?? "")
      const { timestamp: __, spans: effectSpans, ...expected } = JSON.parse(effects[0] ?? "")
      expect(rest).toEqual(expected)
      expect(Object.keys(spans)).toEqual(Object.keys(effectSpans))
      expect(rest.annotations).toEqual({ request_id: "req_3", method: "GET", route: "/api/v1/tasks", status: 200, duration_ms: 0.4, replica: "b" })
    }))

  it.effect("a field that is not a string, number, boolean or null is written as Effect's logger writes it", () =>
    Effect.gen(function* () {
      const [line] = yield* written("json", Effect.logInfo("pull", { lab: "lab_1", at: new Date(0), refs: ["main"] }))
      expect(Schema.decodeUnknownSync(JsonLine)(line)).toEqual({
        message: "pull",
        logLevel: "INFO",
        annotations: { lab: "lab_1", at: "1970-01-01T00:00:00.000Z", refs: ["main"] }
      })
    }))

  it.effect("logfmt writes the fields as keys and values", () =>
    Effect.gen(function* () {
      const [line] = yield* written("logfmt", Effect.logInfo("push", { lab: "lab_1", pushed: 3 }))
      expect(line).toContain("message=push")
      expect(line).toContain("lab=lab_1")
      expect(line).toContain("pushed=3")
    }))

  it.effect("below the level, nothing is written", () =>
    Effect.gen(function* () {
      const lines = yield* written("json", Effect.logDebug("pull", { lab: "lab_1" }))
      expect(lines).toEqual([])
    }))
})
