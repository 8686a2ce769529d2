import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { orNotFound } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { addTo, totalsList } from "../costs/Money.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { type CostFilter, CostsRepo } from "./CostsRepo.js"
import { CostId, type CreateExperimentCost, type ExperimentCost } from "./Experiment.js"
import { ExperimentsRepo } from "./ExperimentsRepo.js"
import { inTransaction, named } from "./Lookups.js"

const manualCost = (labId: LabId, input: Omit<CreateExperimentCost, "labId">): ExperimentCost => {
  const now = new Date()
  return {
    id: CostId.make(newId("cost")),
    labId,
    experimentId: input.experimentId,
    amount: input.amount,
    currency: input.currency,
    category: input.category,
    source: input.source,
    description: input.description,
    origin: "manual",
    incurredAt: input.incurredAt ?? now,
    createdAt: now
  }
}

/** Cost records of experiments, and their totals by currency and category. */
export class ExperimentCosts extends Effect.Service<ExperimentCosts>()("ExperimentCosts", {
  dependencies: [CostsRepo.Default, ExperimentsRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity, costs } = yield* Effect.all({ ...resourceDeps(ExperimentsRepo), costs: CostsRepo })

    const record = (labId: LabId, input: Omit<CreateExperimentCost, "labId">, actor: string) =>
      Effect.gen(function* () {
        const experiment = yield* named("experimentId", "experiment", input.experimentId)(repo.findForUpdate(labId, input.experimentId))
        const cost = manualCost(labId, input)
        yield* costs.insert(cost)
        yield* activity.record({
          labId,
          kind: "experiment.cost_recorded",
          ref: experiment.id,
          actor,
          message: `Recorded ${cost.amount} ${cost.currency} of ${cost.category} (${cost.source}) for ${experiment.name}`,
          data: { costId: cost.id, amount: cost.amount, currency: cost.currency, category: cost.category, source: cost.source }
        })
        return cost
      }).pipe(inTransaction({ sql }))

    const list = (labId: LabId, filter: CostFilter & PageQuery) =>
      Effect.gen(function* () {
        if (filter.experimentId !== undefined) yield* orNotFound("experiment", filter.experimentId)(repo.find(labId, filter.experimentId))
        const [page, rows] = yield* Effect.all([costs.list(labId, filter), costs.totals(labId, filter)])
        const totals = new Map<string, { total: number; compute: number; api: number; storage: number; count: number }>()
        for (const row of rows) addTo(totals, row.currency, row.category, row.amount, row.count)
        return { page, totals: totalsList(totals) }
      })

    return { record, list }
  })
}) {}
