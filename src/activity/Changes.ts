import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, type Option } from "effect"
import { orNotFound } from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import type { ActivityRepo } from "./ActivityRepo.js"
import { inTransaction } from "../db/Transaction.js"

/** The fields whose values differ between two versions of a resource. */
export const changedFields = <A, K extends keyof A>(fields: ReadonlyArray<K>, current: A, next: A): Array<K> =>
  fields.filter((field) => JSON.stringify(next[field]) !== JSON.stringify(current[field]))

/** `current` with each of `fields` the patch gives a value for; as `??`, an absent or null value keeps the current one. */
export const applyPatch = <A, K extends keyof A>(
  current: A,
  patch: { readonly [F in K]?: A[F] | null | undefined },
  fields: ReadonlyArray<K>
): A =>
  fields.reduce((next, field) => {
    const value = patch[field]
    return value === undefined || value === null ? next : { ...next, [field]: value }
  }, current)

/** How the activity feed names a resource with a lifecycle, and the verb of each status it moves to. */
export interface LifecycleLog<S extends string> {
  /** the activity kind's prefix, and how an update names the resource: `agent` */
  readonly kind: string
  /** how a status move names it: `Agent` */
  readonly label: string
  readonly verbs: Readonly<Record<S, string>>
}

/** A change's activity entry: a status move is `<kind>.<verb>`, any other change `<kind>.updated` naming the fields. */
export const changeEntry = <S extends string>(
  log: LifecycleLog<S>,
  name: string,
  from: S,
  to: S,
  changed: ReadonlyArray<string>
) => {
  const moved = from !== to
  return {
    kind: moved ? `${log.kind}.${log.verbs[to]}` : `${log.kind}.updated`,
    message: moved ? `${log.label} ${name}: ${from} → ${to}` : `Updated ${log.kind} ${name} (${changed.join(", ")})`,
    data: { changed, ...(moved ? { from, to } : {}) }
  }
}

interface Logged {
  readonly sql: SqlClient.SqlClient
  readonly activity: ActivityRepo
}

/**
 * Delete one of the lab's resources and log it, in one transaction: 404 naming `resource` when the lab has none
 * with this id. `entry` says what the activity feed tells of the deleted value.
 */
export const removeLogged = <A>(
  { sql, activity }: Logged,
  target: { readonly labId: LabId; readonly resource: string; readonly id: string; readonly actor: string },
  remove: Effect.Effect<Option.Option<A>>,
  entry: (deleted: A) => { readonly kind: string; readonly message: string; readonly data: Record<string, unknown> }
) =>
  Effect.gen(function* () {
    const deleted = yield* orNotFound(target.resource, target.id)(remove)
    yield* activity.record({ labId: target.labId, ref: target.id, actor: target.actor, ...entry(deleted) })
    return deleted
  }).pipe(inTransaction(sql))

/**
 * Store a new resource and log its creation (inside the caller's transaction): `insert`, then the activity entry
 * naming it; `entry` says what the feed tells of it. Gives the value stored.
 */
export const insertLogged = <A extends { readonly id: string; readonly labId: string }, E, R>(
  activity: ActivityRepo,
  insert: (value: A) => Effect.Effect<void, E, R>,
  value: A,
  actor: string,
  entry: { readonly kind: string; readonly message: string; readonly data: Record<string, unknown> }
) => Effect.as(Effect.zipRight(insert(value), activity.record({ labId: value.labId, ref: value.id, actor, ...entry })), value)

/**
 * The tail of a lifecycle resource's update (inside the caller's transaction): `current` itself when no field of
 * `fields` differs in `next`; else `next` stamped with a new updatedAt, stored by `store`, and the change logged.
 */
export const storeChange = <
  S extends string,
  A extends { readonly status: S; readonly updatedAt: Date },
  K extends keyof A & string,
  E,
  R
>(
  change: {
    readonly activity: ActivityRepo
    readonly target: { readonly labId: LabId; readonly id: string; readonly actor: string }
    readonly log: LifecycleLog<S>
    readonly fields: ReadonlyArray<K>
    readonly name: (value: A) => string
    readonly store: (value: A) => Effect.Effect<void, E, R>
  },
  current: A,
  next: A
): Effect.Effect<A, E, R> => {
  const changed = changedFields(change.fields, current, next)
  if (changed.length === 0) return Effect.succeed(current)
  const updated: A = { ...next, updatedAt: new Date() }
  const { labId, id, actor } = change.target
  const entry = changeEntry(change.log, change.name(updated), current.status, updated.status, changed)
  return Effect.as(Effect.zipRight(change.store(updated), change.activity.record({ labId, ref: id, actor, ...entry })), updated)
}
