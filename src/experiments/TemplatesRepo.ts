import { Effect, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import { Template } from "./Experiment.js"

export class TemplatesRepo extends Effect.Service<TemplatesRepo>()("TemplatesRepo", {
  effect: makeLabTable({
    table: "experiment_templates",
    row: Schema.typeSchema(Template),
    columns: (t: Template) => ({ ...t, paramsSchema: JSON.stringify(t.paramsSchema), defaults: JSON.stringify(t.defaults) })
  })
}) {}
