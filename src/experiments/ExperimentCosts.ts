import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { addTo, totalsList } from "../costs/Money.js"
import type { PageQuery } from "../http/Pagination.js"
import { type CostFilter, CostsRepo } from "./CostsRepo.js"
import type { CreateExperimentCost, ExperimentCost } from "./Experiment.js"
import { ExperimentsRepo } from "./ExperimentsRepo.js"
import { named, orNotFound } from "./Lookups.js"

/** Cost records of experiments, and their totals by currency and category. */
export class ExperimentCosts extends Effect.Service<ExperimentCosts>()("ExperimentCosts", {
  dependencies: [CostsRepo.Default, ExperimentsRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const costs = yield* CostsRepo
    const repo = yield* ExperimentsRepo
    const activity = yield* ActivityRepo

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), orNotFound("experiment", id))

    const recordCost = (labId: string, input: Omit<CreateExperimentCost, "labId">, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const experiment = yield* Effect.flatMap(
            repo.findForUpdate(labId, input.experimentId),
            named("experimentId", "experiment", input.experimentId)
          )
          const now = new Date()
          const cost: ExperimentCost = {
            id: newId("cost"),
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
        })
      )

    const listCosts = (labId: string, filter: CostFilter & PageQuery) =>
      Effect.gen(function* () {
        if (filter.experimentId !== undefined) yield* get(labId, filter.experimentId)
        const [page, rows] = yield* Effect.all([costs.list(labId, filter), costs.totals(labId, filter)])
        const totals = new Map<string, { total: number; compute: number; api: number; storage: number; count: number }>()
        for (const row of rows) addTo(totals, row.currency, row.category, row.amount, row.count)
        return { page, totals: totalsList(totals) }
      })

    return { record: recordCost, list: listCosts }
  })
}) {}
