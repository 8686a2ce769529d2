import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import type { Writer } from "../files/PushQueue.js"

export const OutboxEntry = Schema.Struct({
  id: Schema.Number,
  labId: Schema.String,
  path: Schema.String,
  content: Schema.NullOr(Schema.String),
  actor: Schema.String,
  /** The name of the credential that made the write (migration 16); null for writes queued before. */
  authorName: Schema.NullOr(Schema.String),
  /** The commit a push carrying this write was about to move the branch to, while its outcome is unknown. */
  pushCommit: Schema.NullOr(Schema.String)
})
export type OutboxEntry = typeof OutboxEntry.Type

const SetAsideRow = Schema.Struct({
  path: Schema.String,
  deleted: Schema.Boolean,
  reason: Schema.String,
  setAsideAt: Schema.DateFromSelf
})

/** How many set-aside writes GET /sync lists (it counts them all). */
const SET_ASIDE_SHOWN = 20

/** The outbox of unpushed writes (SyncRepo's half of them). */
export const outboxQueries = (sql: SqlClient.SqlClient) => {
  const enqueue = (labId: string, path: string, content: string | null, writer: Writer) =>
    Effect.orDie(sql`
      INSERT INTO outbox (lab_id, path, content, actor, author_name, created_at)
      VALUES (${labId}, ${path}, ${content}, ${writer.actor}, ${writer.name}, now())`)

  // set-aside writes stay in the outbox, as a record, but are never pending again
  /** The oldest writes waiting to be pushed, at most `limit` of them (a push takes them a chunk at a time). */
  const pending = (labId: string, limit: number) =>
    sql`SELECT id, lab_id, path, content, actor, author_name, push_commit FROM outbox
        WHERE lab_id = ${labId} AND set_aside_at IS NULL ORDER BY id LIMIT ${limit}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(OutboxEntry))),
      Effect.orDie
    )

  /** Before a push: the commit these writes are about to land in (so a push whose answer is lost can be told). */
  const markPushing = (ids: ReadonlyArray<number>, commit: string) =>
    ids.length === 0 ? Effect.void : Effect.orDie(sql`UPDATE outbox SET push_commit = ${commit} WHERE id IN ${sql.in(ids)}`)

  /** A push that did not land: its writes wait for the next one. */
  const clearPushing = (labId: string) =>
    Effect.orDie(sql`UPDATE outbox SET push_commit = NULL WHERE lab_id = ${labId} AND push_commit IS NOT NULL`)

  const pendingCount = (labId: string) =>
    Effect.map(Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE lab_id = ${labId} AND set_aside_at IS NULL`), (rows) => rows[0]?.n ?? 0)

  const pendingPaths = (labId: string) =>
    Effect.map(Effect.orDie(sql<{ path: string }>`SELECT DISTINCT path FROM outbox WHERE lab_id = ${labId} AND set_aside_at IS NULL`), (rows) =>
      new Set(rows.map((r) => r.path))
    )

  const done = (ids: ReadonlyArray<number>) =>
    ids.length === 0 ? Effect.void : Effect.orDie(sql`DELETE FROM outbox WHERE id IN ${sql.in(ids)}`)

  const noteAttempt = (labId: string, message: string) =>
    Effect.orDie(sql`
      UPDATE outbox SET attempts = attempts + 1, last_error = ${message} WHERE lab_id = ${labId} AND set_aside_at IS NULL`)

  /** Take a write that can never be pushed out of the queue, with the reason. */
  const setAside = (id: number, reason: string) =>
    Effect.orDie(sql`UPDATE outbox SET set_aside_at = now(), set_aside_reason = ${reason} WHERE id = ${id}`)

  /** The set-aside writes: how many, and the newest of them. */
  const setAsideOf = (labId: string) =>
    Effect.gen(function* () {
      const rows = yield* sql`
        SELECT path, content IS NULL AS deleted, coalesce(set_aside_reason, '') AS reason, set_aside_at
        FROM outbox WHERE lab_id = ${labId} AND set_aside_at IS NOT NULL
        ORDER BY set_aside_at DESC, id DESC LIMIT ${SET_ASIDE_SHOWN}`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(SetAsideRow))))
      const count =
        rows.length < SET_ASIDE_SHOWN
          ? rows.length
          : ((yield* sql<{ n: number }>`
              SELECT count(*)::int AS n FROM outbox WHERE lab_id = ${labId} AND set_aside_at IS NOT NULL`)[0]?.n ?? 0)
      return { count, newest: rows }
    }).pipe(Effect.orDie)

  /** Labs with writes older than `seconds` still to push (a replica died with them queued, say). */
  const labsWaiting = (seconds: number) =>
    Effect.map(
      Effect.orDie(
        sql<{ labId: string }>`SELECT DISTINCT lab_id FROM outbox
          WHERE set_aside_at IS NULL AND created_at < now() - make_interval(secs => ${seconds})`
      ),
      (rows) => rows.map((r) => r.labId)
    )

  return { enqueue, pending, pendingCount, pendingPaths, markPushing, clearPushing, done, noteAttempt, setAside, setAsideOf, labsWaiting }
}
