/**
 * The request line's cost (src/http/RequestLog.ts): its fields given as the message's second part and written as
 * annotations by the service's logger (layers/Logging.ts `withFields`), against `Effect.annotateLogs` around
 * `Effect.logInfo`, both formatted by Effect's JSON logger into memory, alternating rounds in this process.
 *
 *   npm run bench:log
 *
 * Knobs: BENCH_LINES (lines per round, 50000), BENCH_ROUNDS (5).
 */
import { Effect, Logger } from "effect"
import { withFields } from "../layers/Logging.js"

const LINES = Number(process.env.BENCH_LINES ?? 50_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

let written = 0
let last = ""
const keep = (line: string) => {
  written++
  last = line
}
const fieldsOf = (i: number) => ({ request_id: `req_${i}`, method: "GET", route: "/api/v1/tasks", status: 200, duration_ms: 1.2 })

const variants = {
  "annotateLogs": {
    logger: Logger.map(Logger.jsonLogger, keep),
    line: (i: number) => Effect.logInfo("request").pipe(Effect.annotateLogs(fieldsOf(i)))
  },
  "fields in the message": {
    logger: Logger.map(withFields(Logger.jsonLogger), keep),
    line: (i: number) => Effect.logInfo("request", fieldsOf(i))
  }
}

const round = (variant: (typeof variants)[keyof typeof variants]) => {
  const lines = Effect.gen(function* () {
    for (let i = 0; i < LINES; i++) yield* variant.line(i)
  })
  const started = performance.now()
  Effect.runSync(Effect.provide(lines, Logger.replace(Logger.defaultLogger, variant.logger)))
  return ((performance.now() - started) * 1000) / LINES
}

const lines: Record<string, Array<number>> = {}
for (let r = 0; r <= ROUNDS; r++) {
  for (const [name, variant] of Object.entries(variants)) {
    const micros = round(variant)
    // round 0 warms the JIT and is not counted
    if (r > 0) (lines[name] ??= []).push(micros)
  }
}
console.log(`request log line, ${LINES} lines a round, ${ROUNDS} rounds; last line: ${last}`)
for (const [name, micros] of Object.entries(lines)) {
  const sorted = [...micros].sort((a, b) => a - b)
  console.log(`${name.padEnd(22)} median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(2)} µs a line (rounds: ${micros.map((m) => m.toFixed(2)).join(", ")})`)
}
if (written !== LINES * (ROUNDS + 1) * 2) throw new Error(`expected ${LINES * (ROUNDS + 1) * 2} lines, got ${written}`)
