import { Effect, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import { KnowledgeEntry } from "./Knowledge.js"

export interface KnowledgeFilter extends PageQuery {
  readonly tag?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

export class KnowledgeRepo extends Effect.Service<KnowledgeRepo>()("KnowledgeRepo", {
  effect: Effect.map(
    makeLabTable({
      table: "knowledge",
      // columns the search feature may add to the table are left out when decoding
      row: Schema.typeSchema(KnowledgeEntry),
      columns: (entry: KnowledgeEntry) => ({ ...entry, sources: JSON.stringify(entry.sources), tags: JSON.stringify(entry.tags) })
    }),
    (table) => ({
      ...table,
      insert: (entry: KnowledgeEntry) => Effect.orDie(table.insert(entry)),
      update: (entry: KnowledgeEntry) => Effect.orDie(table.update(entry)),
      list: table.listBy((where, filter: KnowledgeFilter) => [where.hasTag("tags", filter.tag), where.created(filter)])
    })
  )
}) {}
