import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { Agent, type AgentStatus } from "./Agent.js"

const Row = Schema.typeSchema(Agent)
const Key = Schema.Struct({ labId: Schema.String, id: Schema.String })

export interface AgentFilter extends PageQuery {
  readonly status: Option.Option<AgentStatus>
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class AgentsRepo extends Effect.Service<AgentsRepo>()("AgentsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = (labId: string, filter: AgentFilter) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT * FROM agents
          WHERE lab_id = ${labId}
            AND ${Option.match(filter.status, { onNone: () => sql`TRUE`, onSome: (s) => sql`status = ${s}` })}
            AND ${keyset(sql, filter.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${filter.limit + 1}`
        return pageOf(yield* decodeRows(rows), filter.limit)
      })

    const find = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT * FROM agents WHERE id = ${id} AND lab_id = ${labId}`
    })

    const findForUpdate = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`SELECT * FROM agents WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`
    })

    const findByName = SqlSchema.findOne({
      Request: Schema.Struct({ labId: Schema.String, name: Schema.String }),
      Result: Row,
      execute: ({ labId, name }) => sql`SELECT * FROM agents WHERE lab_id = ${labId} AND lower(name) = lower(${name})`
    })

    const deleteOne = SqlSchema.findOne({
      Request: Key,
      Result: Row,
      execute: ({ labId, id }) => sql`DELETE FROM agents WHERE id = ${id} AND lab_id = ${labId} RETURNING *`
    })

    return {
      list: (labId: string, filter: AgentFilter) => Effect.orDie(list(labId, filter)),
      find: (labId: string, id: string): Effect.Effect<Option.Option<Agent>> => Effect.orDie(find({ labId, id })),
      /** Inside a transaction: the row, locked until it ends. */
      findForUpdate: (labId: string, id: string): Effect.Effect<Option.Option<Agent>> => Effect.orDie(findForUpdate({ labId, id })),
      findByName: (labId: string, name: string): Effect.Effect<Option.Option<Agent>> => Effect.orDie(findByName({ labId, name })),
      /** Fails with the SqlError of a unique violation when the name is taken. */
      insert: (agent: Agent) => sql`INSERT INTO agents ${sql.insert(agent)}`,
      /** Fails with the SqlError of a unique violation when the new name is taken. */
      update: (agent: Agent) =>
        sql`UPDATE agents SET ${sql.update(
          {
            name: agent.name,
            role: agent.role,
            model: agent.model,
            status: agent.status,
            lastActiveAt: agent.lastActiveAt,
            updatedAt: agent.updatedAt
          }
        )} WHERE id = ${agent.id} AND lab_id = ${agent.labId}`,
      /** The agent was active at `at` (never moves lastActiveAt back). */
      touch: (labId: string, id: string, at: Date) =>
        Effect.orDie(sql`
          UPDATE agents SET last_active_at = GREATEST(COALESCE(last_active_at, ${at}), ${at})
          WHERE id = ${id} AND lab_id = ${labId}`),
      delete: (labId: string, id: string): Effect.Effect<Option.Option<Agent>> => Effect.orDie(deleteOne({ labId, id }))
    }
  })
}) {}
