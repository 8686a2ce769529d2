import { Effect, Either } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { newId } from "../common/Ids.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateTemplate, type Template, TemplateId } from "./Experiment.js"
import { inTransaction, invalid } from "./Lookups.js"
import { checkSchema, validateParams } from "./ParamsSchema.js"
import { TemplatesRepo } from "./TemplatesRepo.js"
import { insertLogged } from "../activity/Changes.js"

/** A template's schema is one this service enforces, and its defaults satisfy it (but for what is required). */
const checkTemplate = (input: Omit<CreateTemplate, "labId">) => {
  const schema = checkSchema(input.paramsSchema)
  if (Either.isLeft(schema)) return Effect.fail(invalid("paramsSchema", schema.left))
  const defaults = validateParams(input.paramsSchema, input.defaults)
  // `required` is what an experiment must end up with, not what defaults must hold
  if (Either.isLeft(defaults) && !/is required by the template$/.test(defaults.left)) {
    return Effect.fail(invalid("defaults", defaults.left.replace(/^params\./, "defaults.")))
  }
  return Effect.void
}

/** Experiment templates: a params schema and defaults that experiments made from them must satisfy. */
export class ExperimentTemplates extends Effect.Service<ExperimentTemplates>()("ExperimentTemplates", {
  dependencies: [TemplatesRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const { sql, repo: templates, activity } = yield* Effect.all(resourceDeps(TemplatesRepo))

    const create = (labId: LabId, input: Omit<CreateTemplate, "labId">, actor: string) =>
      Effect.gen(function* () {
        yield* checkTemplate(input)
        const now = new Date()
        const template: Template = { id: TemplateId.make(newId("tpl")), labId, ...input, createdAt: now, updatedAt: now }
        yield* insertLogged(activity, templates.insert, template, actor, {
          kind: "experiment_template.created",
          message: `Created experiment template ${template.name}`,
          data: {}
        })
        return template
      }).pipe(inTransaction({ sql }))

    return { list: (labId: LabId, page: PageQuery) => templates.page(labId, () => [], page), create }
  })
}) {}
