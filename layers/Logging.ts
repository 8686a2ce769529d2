import { Config, Layer, Logger, LogLevel } from "effect"

/**
 * LOG_FORMAT: `json` (one object a line: what a log shipper reads), `pretty` (for a person at a terminal) or
 * `logfmt`; by default `pretty` when standard output is a terminal and `json` otherwise, as in production.
 * LOG_LEVEL: `debug`, `info` (default: a line per request, per pull and per push that changed something), `warning`, `error`.
 */
export const LogSettings = Config.all({
  format: Config.literal("json", "pretty", "logfmt")("LOG_FORMAT").pipe(
    Config.withDefault(process.stdout.isTTY ? ("pretty" as const) : ("json" as const))
  ),
  level: Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
})
export type LogSettings = Config.Config.Success<typeof LogSettings>

const formats = { json: Logger.json, pretty: Logger.pretty, logfmt: Logger.logFmt }

export const layer = (settings: LogSettings) => Layer.merge(formats[settings.format], Logger.minimumLogLevel(settings.level))

/** The logger the environment asks for; a bad LOG_FORMAT or LOG_LEVEL stops the start with a message naming it. */
export const fromEnvironment = Layer.unwrapEffect(Config.map(LogSettings, layer))
