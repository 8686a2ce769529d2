import { Schema } from "effect"
import { LabRef, Timestamp } from "../common/Schemas.js"
import { CostTotal } from "./Money.js"

/** One UTC day of a lab's costs in one currency, by category and by source. */
export const CostDay = Schema.Struct({
  date: Schema.String.annotations({ description: "YYYY-MM-DD (UTC)" }),
  currency: Schema.String,
  total: Schema.Number,
  compute: Schema.Number,
  api: Schema.Number,
  storage: Schema.Number,
  bySource: Schema.Struct({
    pods: Schema.Number.annotations({ description: "pod uptime × costPerHour (category compute)" }),
    experiments: Schema.Number.annotations({ description: "experiment cost records posted by clients" })
  }),
  podUptimeSeconds: Schema.Number
}).annotations({ identifier: "CostDay" })
export type CostDay = typeof CostDay.Type

export const CostReport = Schema.Struct({
  labId: Schema.String,
  from: Timestamp,
  to: Timestamp,
  days: Schema.Array(CostDay).annotations({ description: "days with any cost, oldest first; one entry per currency" }),
  totals: Schema.Array(CostTotal).annotations({ description: "the whole range, per currency" })
}).annotations({ identifier: "CostReport" })
export type CostReport = typeof CostReport.Type

export const CostQuery = Schema.Struct({
  labId: LabRef,
  from: Schema.optional(Timestamp).annotations({ description: "start (inclusive, ISO 8601); default: 00:00 UTC 29 days before `to`" }),
  to: Schema.optional(Timestamp).annotations({ description: "end (exclusive, ISO 8601); default now" })
})
