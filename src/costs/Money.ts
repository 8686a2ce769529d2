import { Schema } from "effect"

/** ISO 4217 currency code. Amounts in different currencies are never added together. */
export const Currency = Schema.String.pipe(
  Schema.pattern(/^[A-Z]{3}$/),
  Schema.annotations({
    description: "ISO 4217 code, three capital letters (USD, EUR, …)",
    message: () => "must be a three-letter ISO 4217 code such as USD"
  })
)

/** A non-negative amount of money, bounded. */
export const Amount = (max: number) =>
  Schema.Number.pipe(
    Schema.finite(),
    Schema.nonNegative({ message: () => "must not be negative" }),
    Schema.lessThanOrEqualTo(max, { message: () => `must be at most ${max}` })
  )

export const CostCategory = Schema.Literal("compute", "api", "storage").annotations({
  description: "compute (GPU/CPU time), api (model/API calls), storage"
})
export type CostCategory = typeof CostCategory.Type

export const COST_CATEGORIES: ReadonlyArray<CostCategory> = ["compute", "api", "storage"]

/** Sums per currency, `{ "USD": 12.5 }`: amounts in different currencies are kept apart. */
export const ByCurrency = Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({
  description: "amount per currency code"
})

/** One currency's total, split by category. */
export const CostTotal = Schema.Struct({
  currency: Schema.String,
  total: Schema.Number,
  compute: Schema.Number,
  api: Schema.Number,
  storage: Schema.Number,
  count: Schema.Number.annotations({ description: "how many records (or pod sessions) went into it" })
}).annotations({ identifier: "CostTotal" })
export type CostTotal = typeof CostTotal.Type

/** Round to a millionth, so float sums read cleanly on the wire. */
export const roundMoney = (n: number): number => Math.round(n * 1_000_000) / 1_000_000

/** Add `amount` into per-currency, per-category totals. */
export const addTo = (
  totals: Map<string, { total: number; compute: number; api: number; storage: number; count: number }>,
  currency: string,
  category: CostCategory,
  amount: number,
  count = 1
) => {
  const t = totals.get(currency) ?? { total: 0, compute: 0, api: 0, storage: 0, count: 0 }
  t.total += amount
  t[category] += amount
  t.count += count
  totals.set(currency, t)
}

/** Totals as a list sorted by currency, rounded. */
export const totalsList = (
  totals: Map<string, { total: number; compute: number; api: number; storage: number; count: number }>
): ReadonlyArray<CostTotal> =>
  [...totals.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, t]) => ({
      currency,
      total: roundMoney(t.total),
      compute: roundMoney(t.compute),
      api: roundMoney(t.api),
      storage: roundMoney(t.storage),
      count: t.count
    }))
