import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { RepoLink } from "./RepoLink.js"

const LinkRow = Schema.Struct({
  labId: Schema.String,
  repo: Schema.String,
  repoKey: Schema.String,
  defaultBranch: Schema.String,
  autoPush: Schema.Boolean,
  tokenSealed: Schema.NullOr(Schema.String),
  tokenOrigin: Schema.NullOr(Schema.String),
  webhookSecretSealed: Schema.NullOr(Schema.String),
  lastSyncAt: Schema.NullOr(Schema.DateFromSelf),
  lastSyncSha: Schema.NullOr(Schema.String),
  lastError: Schema.NullOr(Schema.String),
  lastErrorAt: Schema.NullOr(Schema.DateFromSelf)
})
const decodeLinks = Schema.decodeUnknown(Schema.Array(LinkRow))

export const OutboxEntry = Schema.Struct({
  id: Schema.Number,
  labId: Schema.String,
  path: Schema.String,
  content: Schema.NullOr(Schema.String),
  actor: Schema.String,
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

/** A token to store, sealed, with the origin it was given for. */
export interface SealedToken {
  readonly sealed: string
  readonly origin: string
}

/** The sync's own tables: repository links and the outbox of unpushed writes. */
export class SyncRepo extends Effect.Service<SyncRepo>()("SyncRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const COLUMNS = sql.literal(
      "lab_id, repo, repo_key, default_branch, auto_push, token_sealed, token_origin, webhook_secret_sealed, last_sync_at, last_sync_sha, " +
        "last_error, last_error_at"
    )

    const link = (labId: string): Effect.Effect<Option.Option<RepoLink>> =>
      sql`SELECT ${COLUMNS} FROM lab_repos WHERE lab_id = ${labId}`.pipe(
        Effect.flatMap(decodeLinks),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /** Links whose repository is one of these keys, or ends with `/owner/name`. */
    const linksMatching = (keys: ReadonlyArray<string>, fullName: Option.Option<string>) => {
      const byKey = keys.length > 0 ? sql`repo_key IN ${sql.in(keys)}` : sql`FALSE`
      const byName = Option.match(fullName, {
        onNone: () => sql`FALSE`,
        onSome: (name) => sql`right(repo_key, ${name.length + 1}) = ${`/${name.toLowerCase()}`}`
      })
      return sql`SELECT ${COLUMNS} FROM lab_repos WHERE ${byKey} OR ${byName}`.pipe(Effect.flatMap(decodeLinks), Effect.orDie)
    }

    const linkedLabIds = Effect.map(Effect.orDie(sql<{ labId: string }>`SELECT lab_id FROM lab_repos`), (rows) =>
      rows.map((r) => r.labId)
    )

    /**
     * Create or change a link. A new repository or branch forgets the last synced commit. `token`: None keeps
     * the stored one, null removes it.
     */
    const saveLink = (link: {
      readonly labId: string
      readonly repo: string
      readonly repoKey: string
      readonly defaultBranch: string
      readonly autoPush: boolean
      readonly token: Option.Option<SealedToken | null>
    }) => {
      const token = Option.getOrNull(link.token)
      const keep = Option.isNone(link.token)
      return Effect.orDie(sql`
        INSERT INTO lab_repos (lab_id, repo, repo_key, default_branch, auto_push, token_sealed, token_origin, created_at, updated_at)
        VALUES (${link.labId}, ${link.repo}, ${link.repoKey}, ${link.defaultBranch}, ${link.autoPush},
                ${token?.sealed ?? null}, ${token?.origin ?? null}, now(), now())
        ON CONFLICT (lab_id) DO UPDATE SET
          repo = EXCLUDED.repo,
          repo_key = EXCLUDED.repo_key,
          default_branch = EXCLUDED.default_branch,
          auto_push = EXCLUDED.auto_push,
          token_sealed = ${keep ? sql`lab_repos.token_sealed` : sql`EXCLUDED.token_sealed`},
          token_origin = ${keep ? sql`lab_repos.token_origin` : sql`EXCLUDED.token_origin`},
          last_sync_sha = CASE WHEN lab_repos.repo = EXCLUDED.repo AND lab_repos.default_branch = EXCLUDED.default_branch
                               THEN lab_repos.last_sync_sha END,
          updated_at = now()`)
    }

    /** Store the webhook secret unless one exists; true when this call stored it. */
    const setSecretOnce = (labId: string, sealed: string) =>
      Effect.map(
        Effect.orDie(sql<{ labId: string }>`
          UPDATE lab_repos SET webhook_secret_sealed = ${sealed}, updated_at = now()
          WHERE lab_id = ${labId} AND webhook_secret_sealed IS NULL RETURNING lab_id`),
        (rows) => rows.length > 0
      )

    const recordSynced = (labId: string, sha: Option.Option<string>) =>
      Effect.orDie(sql`
        UPDATE lab_repos SET last_sync_at = now(), last_error = NULL, last_error_at = NULL,
          last_sync_sha = ${Option.isSome(sha) ? sql`${sha.value}` : sql`last_sync_sha`}
        WHERE lab_id = ${labId}`)

    const recordError = (labId: string, message: string) =>
      Effect.orDie(sql`UPDATE lab_repos SET last_error = ${message}, last_error_at = now() WHERE lab_id = ${labId}`)

    const enqueue = (labId: string, path: string, content: string | null, actor: string) =>
      Effect.orDie(sql`
        INSERT INTO outbox (lab_id, path, content, actor, created_at)
        VALUES (${labId}, ${path}, ${content}, ${actor}, now())`)

    // set-aside writes stay in the outbox, as a record, but are never pending again
    /** The oldest writes waiting to be pushed, at most `limit` of them (a push takes them a chunk at a time). */
    const pending = (labId: string, limit: number) =>
      sql`SELECT id, lab_id, path, content, actor, push_commit FROM outbox
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

    /** Remember a webhook delivery; false when it was seen before. */
    return {
      link,
      linksMatching,
      linkedLabIds,
      saveLink,
      setSecretOnce,
      recordSynced,
      recordError,
      enqueue,
      pending,
      pendingCount,
      pendingPaths,
      markPushing,
      clearPushing,
      done,
      noteAttempt,
      setAside,
      setAsideOf
    }
  })
}) {}
