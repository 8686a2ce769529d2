import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { SecretBox } from "../common/SecretBox.js"
import { NotFound, ValidationError } from "../http/Errors.js"
import { Git } from "./Git.js"
import { type LinkRepo, originOf, type RepoLink, repoKeyOf, type SyncStatus, tokenIsBound } from "./RepoLink.js"
import { type SealedToken, SyncRepo } from "./SyncRepo.js"
import { SyncSupervisor } from "./SyncSupervisor.js"
import { WebhookLinks } from "./WebhookLinks.js"
import { hostOfRepo } from "./Webhooks.js"

/** Where git hosts send webhooks: PUBLIC_BASE_URL, provided by the composition. */
export class PublicBaseUrl extends Effect.Tag("PublicBaseUrl")<PublicBaseUrl, URL>() {}

const notLinked = (labId: string) =>
  new NotFound({ message: `lab ${labId} has no linked repository: link one with PATCH /api/v1/sync` })

/** The sync routes' service: link, status, webhook secret, forced pull. */
export class Sync extends Effect.Service<Sync>()("Sync", {
  dependencies: [SyncRepo.Default, SyncSupervisor.Default, WebhookLinks.Default],
  effect: Effect.gen(function* () {
    const repo = yield* SyncRepo
    const supervisor = yield* SyncSupervisor
    const git = yield* Git
    const box = yield* SecretBox
    const baseUrl = yield* PublicBaseUrl
    const sql = yield* SqlClient.SqlClient
    const webhookLinks = yield* WebhookLinks

    const linkOf = (labId: string) =>
      Effect.flatMap(repo.link(labId), Option.match({ onNone: () => Effect.fail(notLinked(labId)), onSome: Effect.succeed }))

    const statusOf = (link: RepoLink) =>
      Effect.map(
        Effect.all([repo.pendingCount(link.labId), repo.setAsideOf(link.labId)]),
        ([pendingCommits, setAside]): SyncStatus => ({
          repo: link.repo,
          defaultBranch: link.defaultBranch,
          lastSyncAt: link.lastSyncAt?.getTime() ?? null,
          lastSyncSha: link.lastSyncSha,
          autoPushOnEdit: link.autoPush,
          lastError: link.lastError === null ? null : { message: link.lastError, at: link.lastErrorAt?.getTime() ?? 0 },
          pendingCommits,
          setAsideCommits: setAside.count,
          setAside: setAside.newest.map((w) => ({
            path: w.path,
            operation: w.deleted ? "delete" : "write",
            reason: w.reason,
            at: w.setAsideAt.getTime()
          })),
          hasToken: tokenIsBound(link),
          hasWebhookSecret: link.webhookSecretSealed !== null
        })
      )

    // one snapshot: the link's last error and the pending count must not straddle a push that clears both
    const status = (labId: string) =>
      Effect.zipRight(
        Effect.orDie(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`),
        Effect.flatMap(linkOf(labId), statusOf)
      ).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /**
     * What happens to the stored token: a new one is bound to the repository's origin; without one, the stored
     * token stays only while the repository stays on the origin it was given for (None: keep it).
     */
    const tokenChange = (
      current: Option.Option<RepoLink>,
      repoUrl: string,
      token: string | null | undefined
    ): Option.Option<SealedToken | null> => {
      if (token === null) return Option.some(null)
      if (token !== undefined) return Option.some({ sealed: box.seal(token), origin: originOf(repoUrl) ?? repoUrl })
      const stored = Option.filter(current, (l) => l.tokenSealed !== null)
      if (Option.isNone(stored)) return Option.none()
      return tokenIsBound({ ...stored.value, repo: repoUrl }) ? Option.none() : Option.some(null)
    }

    /**
     * Link or change the link (absent fields keep their values); a new repository or branch is pulled afresh.
     * It runs exclusively with the lab's git jobs: a fetch in progress never sees its repository reset under it.
     */
    const link = (labId: string, input: Omit<LinkRepo, "labId">) =>
      Effect.gen(function* () {
        // where git traffic may go (README: "Outbound git traffic"); checked again on every connection
        if (input.repo !== undefined) {
          yield* Effect.mapError(git.checkRemote(input.repo), (refused) => new ValidationError({ message: `repo: ${refused.message}` }))
        }
        yield* supervisor.exclusive(
          labId,
          Effect.gen(function* () {
            const current = yield* repo.link(labId)
            const repoUrl = input.repo ?? Option.getOrUndefined(Option.map(current, (l) => l.repo))
            if (repoUrl === undefined) {
              return yield* new ValidationError({ message: "repo is required: the lab has no linked repository yet" })
            }
            const defaultBranch = input.defaultBranch ?? Option.match(current, { onNone: () => "main", onSome: (l) => l.defaultBranch })
            const moved = Option.match(current, {
              onNone: () => true,
              onSome: (l) => l.repo !== repoUrl || l.defaultBranch !== defaultBranch
            })
            if (moved) yield* git.reset(labId)
            yield* repo.saveLink({
              labId,
              repo: repoUrl,
              repoKey: repoKeyOf(repoUrl),
              defaultBranch,
              autoPush: input.autoPushOnEdit ?? Option.match(current, { onNone: () => false, onSome: (l) => l.autoPush }),
              token: tokenChange(current, repoUrl, input.token)
            })
            yield* webhookLinks.invalidate
          })
        )
        yield* supervisor.requestPull(labId)
        return yield* status(labId)
      })

    const webhookUrlOf = (link: RepoLink) => new URL(`/api/webhooks/${hostOfRepo(link.repo)}`, baseUrl).toString()

    /** Spec 2.7: the secret is shown once, when created. */
    const secret = (labId: string) =>
      Effect.gen(function* () {
        const link = yield* linkOf(labId)
        const fresh = randomBytes(32).toString("hex")
        const created = yield* repo.setSecretOnce(labId, box.seal(fresh))
        if (created) yield* webhookLinks.invalidate
        return created
          ? { secret: fresh, existed: false, webhookUrl: webhookUrlOf(link) }
          : { existed: true, webhookUrl: webhookUrlOf(link) }
      })

    const syncNow = (labId: string, subPath: Option.Option<string>) =>
      Effect.gen(function* () {
        yield* linkOf(labId)
        return yield* supervisor.syncNow(labId, subPath)
      })

    return { status, link, secret, syncNow }
  })
}) {}
