import { Config, ConfigError, Either, Layer, Logger, LogLevel } from "effect"

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

const formats = { json: Logger.json, pretty: Logger.pretty, logfmt: Logger.logFmt }

export const layer = (settings: LogSettings) => Layer.merge(formats[settings.format], Logger.minimumLogLevel(settings.level))

/** The logger the environment asks for; a bad LOG_FORMAT or LOG_LEVEL stops the start with a message naming it. */
export const fromEnvironment = Layer.unwrapEffect(Config.map(LogSettings, layer))
