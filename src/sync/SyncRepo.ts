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
  actor: Schema.String
})
export type OutboxEntry = typeof OutboxEntry.Type

/** The sync's own tables: repository links, the outbox of unpushed writes, webhook deliveries. */
export class SyncRepo extends Effect.Service<SyncRepo>()("SyncRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const COLUMNS = sql.literal(
      "lab_id, repo, repo_key, default_branch, auto_push, token_sealed, webhook_secret_sealed, last_sync_at, last_sync_sha, last_error, last_error_at"
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

    /** Create or change a link. A new repository or branch forgets the last synced commit. */
    const saveLink = (link: {
      readonly labId: string
      readonly repo: string
      readonly repoKey: string
      readonly defaultBranch: string
      readonly autoPush: boolean
      readonly tokenSealed: Option.Option<string | null>
    }) =>
      Effect.orDie(sql`
        INSERT INTO lab_repos (lab_id, repo, repo_key, default_branch, auto_push, token_sealed, created_at, updated_at)
        VALUES (${link.labId}, ${link.repo}, ${link.repoKey}, ${link.defaultBranch}, ${link.autoPush},
                ${Option.getOrNull(link.tokenSealed)}, now(), now())
        ON CONFLICT (lab_id) DO UPDATE SET
          repo = EXCLUDED.repo,
          repo_key = EXCLUDED.repo_key,
          default_branch = EXCLUDED.default_branch,
          auto_push = EXCLUDED.auto_push,
          token_sealed = ${Option.isSome(link.tokenSealed) ? sql`EXCLUDED.token_sealed` : sql`lab_repos.token_sealed`},
          last_sync_sha = CASE WHEN lab_repos.repo = EXCLUDED.repo AND lab_repos.default_branch = EXCLUDED.default_branch
                               THEN lab_repos.last_sync_sha END,
          updated_at = now()`)

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

    const pending = (labId: string) =>
      sql`SELECT id, lab_id, path, content, actor FROM outbox WHERE lab_id = ${labId} ORDER BY id`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(OutboxEntry))),
        Effect.orDie
      )

    const pendingCount = (labId: string) =>
      Effect.map(Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE lab_id = ${labId}`), (rows) => rows[0]?.n ?? 0)

    const pendingPaths = (labId: string) =>
      Effect.map(Effect.orDie(sql<{ path: string }>`SELECT DISTINCT path FROM outbox WHERE lab_id = ${labId}`), (rows) =>
        new Set(rows.map((r) => r.path))
      )

    const done = (ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.void : Effect.orDie(sql`DELETE FROM outbox WHERE id IN ${sql.in(ids)}`)

    const noteAttempt = (labId: string, message: string) =>
      Effect.orDie(sql`UPDATE outbox SET attempts = attempts + 1, last_error = ${message} WHERE lab_id = ${labId}`)

    /** Remember a webhook delivery; false when it was seen before. */
    const firstDelivery = (host: string, deliveryId: string, labId: string) =>
      Effect.map(
        Effect.orDie(sql<{ deliveryId: string }>`
          INSERT INTO webhook_deliveries (host, delivery_id, lab_id, received_at)
          VALUES (${host}, ${deliveryId}, ${labId}, now())
          ON CONFLICT (host, delivery_id, lab_id) DO NOTHING RETURNING delivery_id`),
        (rows) => rows.length > 0
      )

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
      done,
      noteAttempt,
      firstDelivery
    }
  })
}) {}
