import { Cause, Config, ConfigError, Console, Context, DefaultServices, Either, FiberId, FiberRefs, HashMap, Layer, Logger, LogLevel, Predicate } from "effect"
import { Console as NodeConsole } from "node:console"
import { isoString } from "../src/common/IsoTime.js"

/**
 * LOG_FORMAT: `json` (one object a line: what a log shipper reads), `pretty` (for a person at a terminal) or
 * `logfmt`; by default `pretty` when standard output is a terminal and `json` otherwise, as in production.
 * LOG_LEVEL: `trace`, `debug`, `info` (default: a line per request, per pull and per push that changed something),
 * `warn` (or `warning`), `error`, `fatal`, `none`; in any case.
 */
const LEVELS: Readonly<Record<string, LogLevel.LogLevel>> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export const LogSettings = Config.all({
  format: Config.literal("json", "pretty", "logfmt")("LOG_FORMAT").pipe(
    Config.withDefault(process.stdout.isTTY ? ("pretty" as const) : ("json" as const))
  ),
  level: Config.string("LOG_LEVEL").pipe(
    Config.withDefault("info"),
    Config.mapOrFail((text) => {
      const level = LEVELS[text.trim().toLowerCase()]
      return level === undefined
        ? Either.left(ConfigError.InvalidData(["LOG_LEVEL"], `must be one of ${Object.keys(LEVELS).join(", ")}`))
        : Either.right(level)
    })
  )
})
export type LogSettings = Config.Config.Success<typeof LogSettings>

/**
 * A line's fields ride as the second part of its message (`Effect.logInfo("request", { status: 200 })`) and are
 * written as its annotations, as `Effect.annotateLogs` would put them: annotateLogs sets and restores a FiberRef, a
 * copy of the fiber's refs each way, 13.8 µs a line against 6.6 this way (`npm run bench:log`).
 */
/** An object literal; an error or any other class's instance logged beside a message stays part of it. */
const isFields = (u: unknown): u is Readonly<Record<string, unknown>> => {
  if (!Predicate.isRecord(u)) return false
  const prototype: unknown = Object.getPrototypeOf(u)
  return prototype === Object.prototype || prototype === null
}

export const withFields = <Output>(logger: Logger.Logger<unknown, Output>) =>
  Logger.mapInputOptions(logger, (options: Logger.Logger.Options<unknown>) => {
    const message = options.message
    if (!Array.isArray(message) || message.length !== 2 || !isFields(message[1])) return options
    let annotations = options.annotations
    for (const [key, value] of Object.entries(message[1])) annotations = HashMap.set(annotations, key, value)
    return { ...options, message: message[0], annotations }
  })

/** A value JSON writes the same with or without Effect's circular-safe, redacting stringify. */
const isPlain = (u: unknown): boolean => {
  const type = typeof u
  return type === "string" || type === "number" || type === "boolean" || u === null
}

/**
 * The JSON line of Logger.jsonLogger with the fields as annotations, written directly when every part is a string,
 * number, boolean or null and there is no cause (the request line): Effect's logger gathers the annotations in a
 * HashMap and stringifies through a replacer, which costs more than the line. The fields come after the fiber's own
 * annotations, in the order written; any other line takes Effect's logger.
 */
const jsonWithFields = (general: Logger.Logger<unknown, string>) =>
  Logger.make<unknown, string>((options) => {
    const { annotations, cause, message, spans } = options
    if (!Cause.isEmptyType(cause)) return general.log(options)
    let text: unknown = message
    let fields: Readonly<Record<string, unknown>> | undefined
    if (Array.isArray(message)) {
      const parts: ReadonlyArray<unknown> = message
      const second = parts[1]
      if (parts.length === 1) text = parts[0]
      else if (parts.length === 2 && isFields(second)) {
        text = parts[0]
        fields = second
      } else return general.log(options)
    }
    if (typeof text !== "string") return general.log(options)
    const written: Record<string, unknown> = {}
    for (const [key, value] of annotations) {
      if (!isPlain(value)) return general.log(options)
      written[key] = value
    }
    for (const key in fields) {
      const value = fields[key]
      if (!isPlain(value)) return general.log(options)
      written[key] = value
    }
    const now = options.date.getTime()
    const spansWritten: Record<string, number> = {}
    for (const span of spans) spansWritten[span.label] = now - span.startTime
    return JSON.stringify({
      message: text,
      logLevel: options.logLevel.label,
      timestamp: isoString(options.date),
      annotations: written,
      spans: spansWritten,
      fiberId: FiberId.threadName(options.fiberId)
    })
  })

// colours apply only to values it inspects, never to a line (a string): without them it does not look up the
// terminal's colour settings on every call
const plainConsole = new NodeConsole({ stdout: process.stdout, stderr: process.stderr, colorMode: false })

/**
 * The global console's methods also report each call to node's inspector, which keeps the message with a stack trace
 * captured on the spot: deep in a request's fiber, that costs more than formatting the line. Lines for Effect's
 * default console are written by a console of their own on the same streams, which only writes; a console provided
 * in its place (a test's) gets them as before.
 */
const withPlainConsoleLog = (logger: Logger.Logger<unknown, string>) =>
  Logger.make<unknown, void>((options) => {
    const line = logger.log(options)
    const service = Context.get(FiberRefs.getOrDefault(options.context, DefaultServices.currentServices), Console.Console)
    if (service.unsafe === globalThis.console) plainConsole.log(line)
    else service.unsafe.log(line)
  })

const toConsole = (logger: Logger.Logger<unknown, string>) => withPlainConsoleLog(withFields(logger))

const formats = {
  json: Logger.replace(Logger.defaultLogger, withPlainConsoleLog(jsonWithFields(withFields(Logger.jsonLogger)))),
  // the pretty logger writes to the console itself
  pretty: Logger.replace(Logger.defaultLogger, withFields(Logger.prettyLogger())),
  logfmt: Logger.replace(Logger.defaultLogger, toConsole(Logger.logfmtLogger))
}

export const layer = (settings: LogSettings) => Layer.merge(formats[settings.format], Logger.minimumLogLevel(settings.level))

/** The logger the environment asks for; a bad LOG_FORMAT or LOG_LEVEL stops the start with a message naming it. */
export const fromEnvironment = Layer.unwrapEffect(Config.map(LogSettings, layer))
