import { Effect } from "effect"
import { CostsRepo } from "../experiments/CostsRepo.js"
import { InvalidField } from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import { PodsRepo } from "../pods/PodsRepo.js"
import type { CostDay, CostReport } from "./Cost.js"
import { addTo, roundMoney, totalsList } from "./Money.js"

const DAY = 86_400_000
/** The longest range one report covers. */
export const MAX_DAYS = 366

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY

interface Bucket {
  compute: number
  api: number
  storage: number
  pods: number
  experiments: number
  podSeconds: number
}

/**
 * A lab's costs by UTC day, currency and category, computed from the records:
 * pod sessions (uptime × the rate the session ran at, category compute, source
 * pods; a session crossing midnight is split between the days) and the
 * experiment cost records clients posted. The compute records the service
 * derives from an experiment's time on a pod are not added again: that time is
 * already in the pod's uptime.
 */
export class Costs extends Effect.Service<Costs>()("Costs", {
  dependencies: [PodsRepo.Default, CostsRepo.Default],
  effect: Effect.gen(function* () {
    const pods = yield* PodsRepo
    const records = yield* CostsRepo

    const report = (labId: LabId, range: { readonly from?: Date | undefined; readonly to?: Date | undefined }) =>
      Effect.gen(function* () {
        const now = Date.now()
        const to = range.to ?? new Date(now)
        const from = range.from ?? new Date(startOfDay(to.getTime()) - 29 * DAY)
        if (from.getTime() >= to.getTime()) return yield* new InvalidField({ field: "from", problem: "must be before to" })
        if (to.getTime() - from.getTime() > MAX_DAYS * DAY) {
          return yield* new InvalidField({ field: "from", problem: `the range must be at most ${MAX_DAYS} days` })
        }

        const buckets = new Map<string, Bucket>()
        const bucket = (date: string, currency: string) => {
          const key = `${date} ${currency}`
          let b = buckets.get(key)
          if (!b) {
            b = { compute: 0, api: 0, storage: 0, pods: 0, experiments: 0, podSeconds: 0 }
            buckets.set(key, b)
          }
          return b
        }
        const totals = new Map<string, { total: number; compute: number; api: number; storage: number; count: number }>()

        const end = Math.min(to.getTime(), now)
        for (const session of yield* pods.sessionsBetween(labId, from, to)) {
          const a = Math.max(session.startedAt.getTime(), from.getTime())
          const b = Math.min(session.stoppedAt?.getTime() ?? now, end)
          if (b <= a) continue
          let amount = 0
          for (let t = a; t < b; ) {
            const next = Math.min(startOfDay(t) + DAY, b)
            const seconds = (next - t) / 1000
            const cost = (seconds / 3600) * session.costPerHour
            const day = bucket(dayOf(t), session.currency)
            day.compute += cost
            day.pods += cost
            day.podSeconds += seconds
            amount += cost
            t = next
          }
          addTo(totals, session.currency, "compute", amount)
        }

        for (const row of yield* records.manualByDay(labId, from, to)) {
          const day = bucket(row.day, row.currency)
          day[row.category] += row.amount
          day.experiments += row.amount
          addTo(totals, row.currency, row.category, row.amount, row.count)
        }

        const days: Array<CostDay> = [...buckets.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, b]) => {
            const [date = "", currency = ""] = key.split(" ")
            return {
              date,
              currency,
              total: roundMoney(b.compute + b.api + b.storage),
              compute: roundMoney(b.compute),
              api: roundMoney(b.api),
              storage: roundMoney(b.storage),
              bySource: { pods: roundMoney(b.pods), experiments: roundMoney(b.experiments) },
              podUptimeSeconds: Math.round(b.podSeconds * 1000) / 1000
            }
          })
        const result: CostReport = { labId, from, to, days, totals: totalsList(totals) }
        return result
      })

    return { report }
  })
}) {}
