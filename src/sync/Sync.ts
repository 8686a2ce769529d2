import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { SecretBox } from "../common/SecretBox.js"
import { NotFound } from "../http/Errors.js"
import { Git } from "./Git.js"
import { type LinkRepo, type RepoLink, repoKeyOf, type SyncStatus } from "./RepoLink.js"
import { SyncRepo } from "./SyncRepo.js"
import { SyncSupervisor } from "./SyncSupervisor.js"
import { hostOfRepo } from "./Webhooks.js"

/** Where git hosts send webhooks: PUBLIC_BASE_URL, provided by the composition. */
export class PublicBaseUrl extends Effect.Tag("PublicBaseUrl")<PublicBaseUrl, URL>() {}

const notLinked = (labId: string) =>
  new NotFound({ message: `lab ${labId} has no linked repository: link one with PATCH /api/v1/sync` })

/** The sync routes' service: link, status, webhook secret, forced pull. */
export class Sync extends Effect.Service<Sync>()("Sync", {
  dependencies: [SyncRepo.Default, SyncSupervisor.Default],
  effect: Effect.gen(function* () {
    const repo = yield* SyncRepo
    const supervisor = yield* SyncSupervisor
    const git = yield* Git
    const box = yield* SecretBox
    const baseUrl = yield* PublicBaseUrl
    const sql = yield* SqlClient.SqlClient

    const linkOf = (labId: string) =>
      Effect.flatMap(repo.link(labId), Option.match({ onNone: () => Effect.fail(notLinked(labId)), onSome: Effect.succeed }))

    const statusOf = (link: RepoLink) =>
      Effect.map(
        repo.pendingCount(link.labId),
        (pendingCommits): SyncStatus => ({
          repo: link.repo,
          defaultBranch: link.defaultBranch,
          lastSyncAt: link.lastSyncAt?.getTime() ?? null,
          lastSyncSha: link.lastSyncSha,
          autoPushOnEdit: link.autoPush,
          lastError: link.lastError === null ? null : { message: link.lastError, at: link.lastErrorAt?.getTime() ?? 0 },
          pendingCommits,
          hasToken: link.tokenSealed !== null,
          hasWebhookSecret: link.webhookSecretSealed !== null
        })
      )

    // one snapshot: the link's last error and the pending count must not straddle a push that clears both
    const status = (labId: string) =>
      Effect.zipRight(
        Effect.orDie(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`),
        Effect.flatMap(linkOf(labId), statusOf)
      ).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /** Link or change the link; a new repository or branch is pulled afresh. */
    const link = (labId: string, input: Omit<LinkRepo, "labId">) =>
      Effect.gen(function* () {
        const current = yield* repo.link(labId)
        const defaultBranch = input.defaultBranch ?? Option.match(current, { onNone: () => "main", onSome: (l) => l.defaultBranch })
        const moved = Option.match(current, {
          onNone: () => true,
          onSome: (l) => l.repo !== input.repo || l.defaultBranch !== defaultBranch
        })
        if (moved) yield* git.reset(labId)
        yield* repo.saveLink({
          labId,
          repo: input.repo,
          repoKey: repoKeyOf(input.repo),
          defaultBranch,
          autoPush: input.autoPushOnEdit ?? Option.match(current, { onNone: () => false, onSome: (l) => l.autoPush }),
          tokenSealed:
            input.token === undefined ? Option.none() : Option.some(input.token === null ? null : box.seal(input.token))
        })
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
