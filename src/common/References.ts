import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { InvalidField } from "./DomainErrors.js"

/** Resources a body may name by id, and the table each lives in (every one has `id` and `lab_id`). */
const TABLES = {
  experiment: "experiments",
  template: "experiment_templates",
  queue: "experiment_queues",
  paper: "papers",
  task: "tasks",
  project: "projects",
  agent: "agents",
  dataset: "datasets",
  figure: "figures",
  knowledge: "knowledge",
  chat: "chats",
  survey: "surveys",
  standup: "standups",
  memory: "memory",
  pod: "pods",
  backup: "backups"
} as const

export type ResourceKind = keyof typeof TABLES

/** The id prefix of each kind (src/common/Ids.ts `newId`), to recognise an id in free text. */
const PREFIXES: Readonly<Record<string, ResourceKind>> = {
  exp: "experiment",
  tpl: "template",
  queue: "queue",
  paper: "paper",
  task: "task",
  prj: "project",
  agent: "agent",
  ds: "dataset",
  fig: "figure",
  kn: "knowledge",
  chat: "chat",
  srv: "survey",
  std: "standup",
  mem: "memory",
  pod: "pod",
  bkp: "backup"
}

/** `exp_…` as newId makes it (16 characters after the prefix), or `chats/<id>` as a chat's promotion cites it. */
const ID_SHAPE = /^(?:chats\/)?([a-z]+)_[0-9a-z]{16}$/

/** The kind of resource a free-text reference names, when it has the shape of one of this service's ids. */
export const kindOfRef = (ref: string): ResourceKind | undefined => {
  const match = ID_SHAPE.exec(ref)
  if (match === null) return undefined
  const kind = PREFIXES[match[1] ?? ""]
  return ref.startsWith("chats/") && kind !== "chat" ? undefined : kind
}

const idOfRef = (ref: string) => (ref.startsWith("chats/") ? ref.slice("chats/".length) : ref)

const decodeIds = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String })))

/**
 * Every field that names another resource names one of the same lab: a body
 * naming a missing id, or another lab's, is 422 `<field>: no <kind> <id> in
 * this lab` (the same answer for both, so ids of other labs leak nothing).
 * There are no foreign keys between features; the check runs in the caller's
 * transaction when it has one.
 */
export class References extends Effect.Service<References>()("References", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The ids of this kind that are not in the lab. */
    const missing = (labId: string, kind: ResourceKind, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>> =>
      ids.length === 0
        ? Effect.succeed([])
        : Effect.gen(function* () {
            const rows = yield* sql`SELECT id FROM ${sql(TABLES[kind])} WHERE lab_id = ${labId} AND id IN ${sql.in(ids)}`
            const found = new Set((yield* decodeIds(rows)).map((r) => r.id))
            return [...new Set(ids)].filter((id) => !found.has(id))
          }).pipe(Effect.orDie)

    /** 422 naming `field` unless every id is a `kind` of the lab. */
    const require = (labId: string, field: string, kind: ResourceKind, ids: ReadonlyArray<string>) =>
      Effect.flatMap(missing(labId, kind, ids), (absent) =>
        absent.length === 0 ? Effect.void : Effect.fail(new InvalidField({ field, problem: `no ${kind} ${absent.join(", ")} in this lab` }))
      )

    /** As `require`, for a free-text reference: only one with the shape of this service's ids is checked. */
    const requireIfId = (labId: string, field: string, ref: string | null | undefined) => {
      const kind = ref === null || ref === undefined ? undefined : kindOfRef(ref)
      return kind === undefined || ref === null || ref === undefined ? Effect.void : require(labId, field, kind, [idOfRef(ref)])
    }

    return { missing, require, requireIfId }
  })
}) {}
