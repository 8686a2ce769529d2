import { Effect, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import { MemoryEntry, type MemoryKind } from "./Memory.js"

export interface MemoryFilter extends PageQuery {
  readonly agentId?: string | undefined
  readonly kind?: MemoryKind | undefined
  readonly tag?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

export class MemoryRepo extends Effect.Service<MemoryRepo>()("MemoryRepo", {
  effect: Effect.map(
    makeLabTable({
      table: "memory",
      row: Schema.typeSchema(MemoryEntry),
      columns: (entry: MemoryEntry) => ({ ...entry, tags: JSON.stringify(entry.tags) })
    }),
    (table) => ({
      ...table,
      list: table.listBy((where, filter: MemoryFilter) => [
        where.eq("agent_id", filter.agentId),
        where.eq("kind", filter.kind),
        where.hasTag("tags", filter.tag),
        where.created(filter)
      ])
    })
  )
}) {}
