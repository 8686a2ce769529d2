import { Effect, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import { Survey, type SurveyStatus } from "./Survey.js"

export interface SurveyFilter extends PageQuery {
  readonly status?: SurveyStatus | undefined
  readonly tag?: string | undefined
  readonly paperId?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

export class SurveysRepo extends Effect.Service<SurveysRepo>()("SurveysRepo", {
  effect: Effect.map(
    makeLabTable({
      table: "surveys",
      row: Schema.typeSchema(Survey),
      columns: (s: Survey) => ({ ...s, linkedPaperIds: JSON.stringify(s.linkedPaperIds), tags: JSON.stringify(s.tags) })
    }),
    (table) => ({
      ...table,
      insert: (survey: Survey) => Effect.orDie(table.insert(survey)),
      update: (survey: Survey) => Effect.orDie(table.update(survey)),
      list: table.listBy((where, filter: SurveyFilter) => [
        where.eq("status", filter.status),
        where.hasTag("tags", filter.tag),
        where.hasTag("linked_paper_ids", filter.paperId),
        where.created(filter)
      ])
    })
  )
}) {}
