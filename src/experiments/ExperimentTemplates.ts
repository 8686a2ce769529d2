import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import type { PageQuery } from "../http/Pagination.js"
import type { CreateTemplate, Template } from "./Experiment.js"
import { invalid } from "./Lookups.js"
import { checkSchema, validateParams } from "./ParamsSchema.js"
import { TemplatesRepo } from "./TemplatesRepo.js"

/** Experiment templates: a params schema and defaults that experiments made from them must satisfy. */
export class ExperimentTemplates extends Effect.Service<ExperimentTemplates>()("ExperimentTemplates", {
  dependencies: [TemplatesRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const templates = yield* TemplatesRepo
    const activity = yield* ActivityRepo

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const createTemplate = (labId: string, input: Omit<CreateTemplate, "labId">, actor: string) =>
      Effect.gen(function* () {
        const schema = checkSchema(input.paramsSchema)
        if (Either.isLeft(schema)) return yield* invalid(schema.left)
        const defaults = validateParams(input.paramsSchema, input.defaults)
        if (Either.isLeft(defaults)) {
          // `required` is what an experiment must end up with, not what defaults must hold
          const missingOnly = /is required by the template$/.test(defaults.left)
          if (!missingOnly) return yield* invalid(defaults.left.replace(/^params\./, "defaults."))
        }
        const now = new Date()
        const template: Template = { id: newId("tpl"), labId, ...input, createdAt: now, updatedAt: now }
        return yield* inTransaction(
          Effect.gen(function* () {
            yield* templates.insert(template)
            yield* activity.record({
              labId,
              kind: "experiment_template.created",
              ref: template.id,
              actor,
              message: `Created experiment template ${template.name}`,
              data: {}
            })
            return template
          })
        )
      })

    return { list: (labId: string, page: PageQuery) => templates.list(labId, page), create: createTemplate }
  })
}) {}
