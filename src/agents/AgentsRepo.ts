import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { Agent, type AgentStatus } from "./Agent.js"

const Row = Schema.typeSchema(Agent)

export interface AgentFilter extends PageQuery {
  readonly status: Option.Option<AgentStatus>
}

export class AgentsRepo extends Effect.Service<AgentsRepo>()("AgentsRepo", {
  effect: Effect.map(makeLabTable({ table: "agents", row: Row, columns: (agent: Agent) => ({ ...agent }) }), (table) => {
    const sql = table.sql
    const findByName = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, name: Schema.String }),
      Result: Row,
      execute: ({ labId, name }) => sql`SELECT * FROM agents WHERE lab_id = ${labId} AND lower(name) = lower(${name})`
    })
    return {
      ...table,
      list: table.listBy((where, filter: AgentFilter) => [where.eq("status", Option.getOrUndefined(filter.status))]),
      findByName: (labId: LabId, name: string): Effect.Effect<Option.Option<Agent>> => Effect.orDie(findByName({ labId, name })),
      /** The agent was active at `at` (never moves lastActiveAt back). */
      touch: (labId: LabId, id: string, at: Date) =>
        Effect.orDie(sql`
          UPDATE agents SET last_active_at = GREATEST(COALESCE(last_active_at, ${at}), ${at})
          WHERE id = ${id} AND lab_id = ${labId}`)
    }
  })
}) {}
