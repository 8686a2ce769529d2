import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { outboxQueries } from "./OutboxQueries.js"
import { pullRequests } from "./PullRequests.js"
import type { RepoLink } from "./RepoLink.js"

export { OutboxEntry } from "./OutboxQueries.js"

const LinkRow = Schema.Struct({
  labId: Schema.String,
  repo: Schema.String,
  repoKey: Schema.String,
  defaultBranch: Schema.String,
  autoPush: Schema.Boolean,
  tokenSealed: Schema.NullOr(Schema.String),
  tokenRepo: Schema.NullOr(Schema.String),
  webhookSecretSealed: Schema.NullOr(Schema.String),
  lastSyncAt: Schema.NullOr(Schema.DateFromSelf),
  lastSyncSha: Schema.NullOr(Schema.String),
  lastError: Schema.NullOr(Schema.String),
  lastErrorAt: Schema.NullOr(Schema.DateFromSelf)
})
const decodeLinks = Schema.decodeUnknown(Schema.Array(LinkRow))

/**
 * A token to store, sealed, with the repository it was given for (and that repository's origin, which replicas of
 * versions that bound tokens to origins only still read during a rolling upgrade).
 */
export interface SealedToken {
  readonly sealed: string
  readonly repo: string
  readonly origin: string
}

/**
 * Create or change a link. A new repository or branch forgets the last synced commit. `token`: None keeps
 * the stored one, null removes it.
 */
const saveLink = (sql: SqlClient.SqlClient, link: {
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
    INSERT INTO lab_repos (lab_id, repo, repo_key, default_branch, auto_push, token_sealed, token_origin, token_repo,
                           created_at, updated_at)
    VALUES (${link.labId}, ${link.repo}, ${link.repoKey}, ${link.defaultBranch}, ${link.autoPush},
            ${token?.sealed ?? null}, ${token?.origin ?? null}, ${token?.repo ?? null}, now(), now())
    ON CONFLICT (lab_id) DO UPDATE SET
      repo = EXCLUDED.repo,
      repo_key = EXCLUDED.repo_key,
      default_branch = EXCLUDED.default_branch,
      auto_push = EXCLUDED.auto_push,
      token_sealed = ${keep ? sql`lab_repos.token_sealed` : sql`EXCLUDED.token_sealed`},
      token_origin = ${keep ? sql`lab_repos.token_origin` : sql`EXCLUDED.token_origin`},
      token_repo = ${keep ? sql`lab_repos.token_repo` : sql`EXCLUDED.token_repo`},
      last_sync_sha = CASE WHEN lab_repos.repo = EXCLUDED.repo AND lab_repos.default_branch = EXCLUDED.default_branch
                           THEN lab_repos.last_sync_sha END,
      updated_at = now()`)
}

/** The sync's own tables: repository links and the outbox of unpushed writes. */
export class SyncRepo extends Effect.Service<SyncRepo>()("SyncRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const COLUMNS = sql.literal(
      "lab_id, repo, repo_key, default_branch, auto_push, token_sealed, token_repo, webhook_secret_sealed, last_sync_at, last_sync_sha, " +
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

    return {
      link,
      linksMatching,
      linkedLabIds,
      saveLink: (link: Parameters<typeof saveLink>[1]) => saveLink(sql, link),
      setSecretOnce,
      recordSynced,
      recordError,
      ...outboxQueries(sql),
      ...pullRequests(sql)
    }
  })
}) {}
