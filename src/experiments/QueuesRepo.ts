import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { Queue, type QueueId } from "./Experiment.js"

const Rows = Schema.Array(Schema.typeSchema(Queue))

export class QueuesRepo extends Effect.Service<QueuesRepo>()("QueuesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Queues with their length, running count and waiting time, as of `now`. */
    const select = (now: Date) => sql`
      SELECT q.id, q.lab_id, q.name, q.created_at, q.updated_at,
             COALESCE(s.length, 0)::int AS length,
             COALESCE(s.running, 0)::int AS running,
             s.oldest AS oldest_queued_at,
             COALESCE(EXTRACT(EPOCH FROM (${now}::timestamptz - s.oldest)), 0)::float8 AS waiting_seconds,
             (SELECT n.id FROM experiments n WHERE n.queue_id = q.id AND n.status = 'queued'
              ORDER BY n.queued_at, n.id LIMIT 1) AS next_experiment_id
      FROM experiment_queues q
      LEFT JOIN LATERAL (
        SELECT COUNT(*) FILTER (WHERE e.status = 'queued') AS length,
               COUNT(*) FILTER (WHERE e.status = 'running') AS running,
               MIN(e.queued_at) FILTER (WHERE e.status = 'queued') AS oldest
        FROM experiments e WHERE e.queue_id = q.id AND e.status IN ('queued', 'running')
      ) s ON TRUE`

    const list = (labId: LabId, page: PageQuery) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          ${select(new Date())}
          WHERE q.lab_id = ${labId} AND ${keyset(sql, page.cursor, "q")}
          ORDER BY q.created_at DESC, q.id DESC
          LIMIT ${page.limit + 1}`
        return pageOf(yield* Schema.decodeUnknown(Rows)(rows), page.limit)
      }).pipe(Effect.orDie)

    const find = (labId: LabId, id: string): Effect.Effect<Option.Option<Queue>> =>
      Effect.gen(function* () {
        const rows = yield* sql`${select(new Date())} WHERE q.id = ${id} AND q.lab_id = ${labId}`
        return Option.fromNullable((yield* Schema.decodeUnknown(Rows)(rows))[0])
      }).pipe(Effect.orDie)

    const findByName = (labId: LabId, name: string) =>
      Effect.map(
        Effect.orDie(sql`SELECT id FROM experiment_queues WHERE lab_id = ${labId} AND name = ${name}`),
        (rows) => rows.length > 0
      )

    /** Insert; SqlError (a unique violation on a race) is left to the caller. */
    const insert = (q: { readonly id: QueueId; readonly labId: LabId; readonly name: string; readonly createdAt: Date; readonly updatedAt: Date }) =>
      sql`INSERT INTO experiment_queues ${sql.insert(q)}`

    return { list, find, findByName, insert }
  })
}) {}
