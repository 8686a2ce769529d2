/** What the benchmark scripts compute and print alike: seeded randomness, percentiles, figures and tables. */

/** mulberry32: a small seeded PRNG, so every run measures the same data. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The p-th percentile (nearest rank) of sorted values. */
export const percentile = (sorted: ArrayLike<number>, p: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN)

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2
}

export const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")

/** A Markdown table; columns from `rightAlignFrom` on are right-aligned. */
export const table = (header: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>, rightAlignFrom: number) => {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((c, i) => (i >= rightAlignFrom ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(" | ")} |`
  const rule = `|${widths.map((w, i) => `${"-".repeat(w + 1)}${i >= rightAlignFrom ? ":" : "-"}`).join("|")}|`
  return [line(header), rule, ...body.map(line)].join("\n")
}
