import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { newId } from "../common/Ids.js"
import { keyset, pageOf, type PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { type DesiredStatus, Pod, type PodId, PodSession, type PodStatus } from "./Pod.js"

const decodePods = Schema.decodeUnknown(Schema.Array(Schema.typeSchema(Pod)))
const decodeSessions = Schema.decodeUnknown(Schema.Array(Schema.typeSchema(PodSession)))
const decodeLastSeen = Schema.decodeUnknown(Schema.Array(Schema.Struct({ lastSeenAt: Schema.NullOr(Schema.DateFromSelf) })))

export interface PodFilter extends PageQuery {
  readonly status?: PodStatus | undefined
}

/** The stored columns of a pod; the rest of `Pod` is computed from its sessions. */
export interface PodRecord {
  readonly id: PodId
  readonly labId: LabId
  readonly name: string
  readonly gpu: string | null
  readonly gpuCount: number
  readonly costPerHour: number
  readonly currency: string
  readonly provider: string
  readonly desiredStatus: DesiredStatus
  readonly status: PodStatus
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface StatusChange {
  readonly status?: PodStatus
  readonly desiredStatus?: DesiredStatus
  readonly exitCode?: number | null
  readonly lastError?: string | null
  readonly providerRef?: string | null
}

/** Pods with uptime and cost computed from their sessions, as of now, that match `where`. */
const selectPods = (sql: SqlClient.SqlClient, where: Fragment) => {
  const now = new Date()
  return Effect.orDie(
    Effect.flatMap(
      sql`
        SELECT p.id, p.lab_id, p.name, p.gpu, p.gpu_count, p.cost_per_hour, p.currency, p.provider, p.provider_ref,
               p.desired_status, p.status, p.exit_code, p.last_error, p.created_at, p.updated_at,
               ROUND(COALESCE(u.seconds, 0), 3)::float8 AS uptime_seconds,
               ROUND(COALESCE(u.cost, 0)::numeric, 6)::float8 AS cost,
               u.open_started_at AS started_at,
               u.last_stopped_at AS stopped_at
        FROM pods p
        LEFT JOIN LATERAL (
          SELECT SUM(EXTRACT(EPOCH FROM (COALESCE(s.stopped_at, ${now}::timestamptz) - s.started_at))) AS seconds,
                 SUM(EXTRACT(EPOCH FROM (COALESCE(s.stopped_at, ${now}::timestamptz) - s.started_at)) / 3600 * s.cost_per_hour) AS cost,
                 MAX(s.started_at) FILTER (WHERE s.stopped_at IS NULL) AS open_started_at,
                 MAX(s.stopped_at) AS last_stopped_at
          FROM pod_sessions s WHERE s.pod_id = p.id
        ) u ON TRUE
        ${where}`,
      decodePods
    )
  )
}

/**
 * Change status fields, only when the pod is in one of `from` (and, with `ref`, still on that provider
 * handle): background observers never undo a newer decision. True when the row changed.
 */
const updateStatus = (
  sql: SqlClient.SqlClient,
  id: PodId,
  change: StatusChange,
  from?: ReadonlyArray<PodStatus>,
  ref?: string
) => {
  const set: Record<string, unknown> = { updatedAt: new Date() }
  for (const [key, value] of Object.entries(change)) if (value !== undefined) set[key] = value
  return Effect.map(
    Effect.orDie(sql`
      UPDATE pods SET ${sql.update(set)}
      WHERE id = ${id}
        AND ${from ? sql`status IN ${sql.in(from)}` : sql`TRUE`}
        AND ${ref !== undefined ? sql`provider_ref = ${ref}` : sql`TRUE`}
      RETURNING id`),
    (rows) => rows.length > 0
  )
}

/** Pod sessions: every stretch of running, the record uptime and costs are computed from. */
const sessions = (sql: SqlClient.SqlClient) => ({
  openSession: (pod: Pod, at: Date) =>
    Effect.orDie(
      sql`INSERT INTO pod_sessions ${sql.insert({
        id: newId("psess"),
        labId: pod.labId,
        podId: pod.id,
        podName: pod.name,
        costPerHour: pod.costPerHour,
        currency: pod.currency,
        startedAt: at,
        stoppedAt: null,
        createdAt: new Date()
      })} ON CONFLICT DO NOTHING`
    ),
  closeSession: (podId: PodId, at: Date) =>
    Effect.orDie(
      sql`UPDATE pod_sessions SET stopped_at = GREATEST(started_at, ${at}::timestamptz) WHERE pod_id = ${podId} AND stopped_at IS NULL`
    ),
  /** A lab's sessions that overlap [from, to). */
  sessionsBetween: (labId: string, from: Date, to: Date) =>
    Effect.orDie(
      Effect.flatMap(
        sql`
          SELECT * FROM pod_sessions
          WHERE lab_id = ${labId} AND started_at < ${to} AND (stopped_at IS NULL OR stopped_at > ${from})
          ORDER BY started_at, id`,
        decodeSessions
      )
    )
})

export class PodsRepo extends Effect.Service<PodsRepo>()("PodsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = (pods: ReadonlyArray<Pod>) => Option.fromNullable(pods[0])

    const list = (labId: LabId, filter: PodFilter) =>
      Effect.map(
        selectPods(
          sql,
          sql`
            WHERE p.lab_id = ${labId}
              AND ${filter.status === undefined ? sql`TRUE` : sql`p.status = ${filter.status}`}
              AND ${keyset(sql, filter.cursor, "p")}
            ORDER BY p.created_at DESC, p.id DESC
            LIMIT ${filter.limit + 1}`
        ),
        (pods) => pageOf(pods, filter.limit)
      )

    return {
      list,
      find: (labId: LabId, id: PodId) => Effect.map(selectPods(sql, sql`WHERE p.id = ${id} AND p.lab_id = ${labId}`), first),
      /** By id alone (background work that already knows the pod). */
      findById: (id: string) => Effect.map(selectPods(sql, sql`WHERE p.id = ${id}`), first),
      /** Lock the pod's row for the rest of the transaction; false when the lab has no such pod. */
      lock: (labId: LabId, id: PodId) =>
        Effect.map(Effect.orDie(sql`SELECT id FROM pods WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`), (rows) => rows.length > 0),
      insert: (pod: PodRecord) =>
        Effect.orDie(sql`INSERT INTO pods ${sql.insert({ ...pod, providerRef: null, exitCode: null, lastError: null })}`),
      update: (id: PodId, change: StatusChange, from?: ReadonlyArray<PodStatus>, ref?: string) =>
        updateStatus(sql, id, change, from, ref),
      remove: (labId: LabId, id: PodId) => Effect.orDie(sql`DELETE FROM pods WHERE id = ${id} AND lab_id = ${labId}`),
      /** Pods in a given status, across labs (start-up and shutdown reconciliation). */
      inStatus: (statuses: ReadonlyArray<PodStatus>) =>
        selectPods(sql, sql`WHERE p.status IN ${sql.in(statuses)} ORDER BY p.created_at, p.id`),
      /** Pods the lab wants running but that are stopped (start-up). */
      wantedButStopped: Effect.suspend(() =>
        selectPods(sql, sql`WHERE p.desired_status = 'running' AND p.status = 'stopped' ORDER BY p.created_at, p.id`)
      ),
      /** The last time the service saw the pod running (for sessions cut short by a crash). */
      lastSeen: (id: PodId) =>
        Effect.map(
          Effect.orDie(Effect.flatMap(sql`SELECT last_seen_at FROM pods WHERE id = ${id}`, decodeLastSeen)),
          (rows) => Option.fromNullable(rows[0]?.lastSeenAt ?? null)
        ),
      /** Mark every running pod as seen now (the periodic tick). */
      touchRunning: (at: Date) => Effect.orDie(sql`UPDATE pods SET last_seen_at = ${at} WHERE status = 'running'`),
      ...sessions(sql)
    }
  })
}) {}
