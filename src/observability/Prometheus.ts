import { type MetricPair, MetricState } from "effect"

/**
 * Effect's metric registry in Prometheus's text exposition format (version 0.0.4). Written here rather than
 * through @opentelemetry/exporter-prometheus: that needs the OpenTelemetry metrics SDK in the process and a
 * collection pass per scrape, for a format of one line per value.
 */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")
const safeName = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_")

const labels = (pairs: ReadonlyArray<readonly [string, string]>) =>
  pairs.length === 0 ? "" : `{${pairs.map(([k, v]) => `${safeName(k)}="${escapeLabel(v)}"`).join(",")}}`

const number = (n: number | bigint) =>
  typeof n === "bigint" ? n.toString() : Number.isNaN(n) ? "NaN" : n === Infinity ? "+Inf" : n === -Infinity ? "-Inf" : String(n)

interface Family {
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped"
  help: string | undefined
  lines: Array<string>
}

const linesOf = (name: string, tags: ReadonlyArray<readonly [string, string]>, state: MetricState.MetricState.Untyped) => {
  if (MetricState.isCounterState(state)) return { type: "counter" as const, lines: [`${name}${labels(tags)} ${number(state.count)}`] }
  if (MetricState.isGaugeState(state)) return { type: "gauge" as const, lines: [`${name}${labels(tags)} ${number(state.value)}`] }
  if (MetricState.isHistogramState(state)) {
    const buckets = state.buckets.map(
      ([bound, count]) => `${name}_bucket${labels([...tags, ["le", number(bound)]])} ${count}`
    )
    // Effect's boundaries end at +Inf, whose cumulative count is the total
    if (state.buckets.at(-1)?.[0] !== Infinity) buckets.push(`${name}_bucket${labels([...tags, ["le", "+Inf"]])} ${state.count}`)
    return {
      type: "histogram" as const,
      lines: [...buckets, `${name}_sum${labels(tags)} ${number(state.sum)}`, `${name}_count${labels(tags)} ${state.count}`]
    }
  }
  if (MetricState.isFrequencyState(state)) {
    return {
      type: "counter" as const,
      lines: [...state.occurrences].map(([key, count]) => `${name}${labels([...tags, ["key", key]])} ${count}`)
    }
  }
  return { type: "untyped" as const, lines: [] }
}

/** The registry's metrics as one Prometheus text document: a family per name, its HELP and TYPE, then its series. */
export const toPrometheusText = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  for (const { metricKey, metricState } of pairs) {
    const name = safeName(metricKey.name)
    const tags = metricKey.tags.map((tag) => [tag.key, tag.value] as const).sort(([a], [b]) => a.localeCompare(b))
    const { type, lines } = linesOf(name, tags, metricState)
    const family = families.get(name) ?? { type, help: metricKey.description._tag === "Some" ? metricKey.description.value : undefined, lines: [] }
    family.lines.push(...lines)
    families.set(name, family)
  }
  const out: Array<string> = []
  for (const [name, family] of [...families].sort(([a], [b]) => a.localeCompare(b))) {
    if (family.lines.length === 0) continue
    if (family.help !== undefined) out.push(`# HELP ${name} ${escapeHelp(family.help)}`)
    out.push(`# TYPE ${name} ${family.type}`, ...family.lines)
  }
  return `${out.join("\n")}\n`
}

/** A gauge family written as read at the scrape, outside the registry (a series per lab must go when the lab does). */
export const gaugeText = (name: string, help: string, series: ReadonlyArray<readonly [ReadonlyArray<readonly [string, string]>, number]>) =>
  series.length === 0
    ? ""
    : `${[`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} gauge`, ...series.map(([tags, value]) => `${name}${labels(tags)} ${number(value)}`)].join("\n")}\n`
