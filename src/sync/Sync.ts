import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { SecretBox } from "../common/SecretBox.js"
import { InvalidField, NotFoundInLab } from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import { Git } from "./Git.js"
import { type LinkRepo, originOf, type RepoLink, repoKeyOf, type SyncStatus, tokenIsBound } from "./RepoLink.js"
import { type SealedToken, SyncRepo } from "./SyncRepo.js"
import { SyncSupervisor } from "./SyncSupervisor.js"
import { WebhookLinks } from "./WebhookLinks.js"
import { hostOfRepo } from "./Webhooks.js"

/** Where git hosts send webhooks: PUBLIC_BASE_URL, provided by the composition. */
export class PublicBaseUrl extends Effect.Tag("PublicBaseUrl")<PublicBaseUrl, URL>() {}

const notLinked = (labId: LabId) => new NotFoundInLab({ resource: "linked repository (link one with PATCH /api/v1/sync)", id: labId })

/** What the sync routes' operations below work with. */
interface SyncDeps {
  readonly repo: SyncRepo
  readonly supervisor: SyncSupervisor
  readonly git: Context.Tag.Service<typeof Git>
  readonly box: Context.Tag.Service<typeof SecretBox>
  readonly baseUrl: URL
  readonly sql: SqlClient.SqlClient
  readonly webhookLinks: WebhookLinks
}

const linkOf = (d: SyncDeps, labId: LabId) =>
  Effect.flatMap(d.repo.link(labId), Option.match({ onNone: () => Effect.fail(notLinked(labId)), onSome: Effect.succeed }))

const statusOf = (d: SyncDeps, link: RepoLink) =>
  Effect.map(
    Effect.all([d.repo.pendingCount(link.labId), d.repo.setAsideOf(link.labId)]),
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
const status = (d: SyncDeps, labId: LabId) =>
  Effect.zipRight(
    Effect.orDie(d.sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`),
    Effect.flatMap(linkOf(d, labId), (link) => statusOf(d, link))
  ).pipe(d.sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

/**
 * What happens to the stored token: a new one is bound to the repository; without one, the stored token stays
 * only while the link stays on the repository it was given for (None: keep it). README "Security model".
 */
const tokenChange = (
  d: SyncDeps,
  current: Option.Option<RepoLink>,
  repoUrl: string,
  token: string | null | undefined
): Option.Option<SealedToken | null> => {
  if (token === null) return Option.some(null)
  if (token !== undefined) return Option.some({ sealed: d.box.seal(token), repo: repoUrl, origin: originOf(repoUrl) ?? repoUrl })
  const stored = Option.filter(current, (l) => l.tokenSealed !== null)
  if (Option.isNone(stored)) return Option.none()
  return tokenIsBound({ ...stored.value, repo: repoUrl }) ? Option.none() : Option.some(null)
}

/** The new link saved (the local repository reset when the repository or the branch changed). */
const saveLink = (d: SyncDeps, labId: LabId, input: Omit<LinkRepo, "labId">) =>
  Effect.gen(function* () {
    const current = yield* d.repo.link(labId)
    const repoUrl = input.repo ?? Option.getOrUndefined(Option.map(current, (l) => l.repo))
    if (repoUrl === undefined) {
      return yield* new InvalidField({ field: "repo", problem: "is required: the lab has no linked repository yet" })
    }
    const defaultBranch = input.defaultBranch ?? Option.match(current, { onNone: () => "main", onSome: (l) => l.defaultBranch })
    const moved = Option.match(current, {
      onNone: () => true,
      onSome: (l) => l.repo !== repoUrl || l.defaultBranch !== defaultBranch
    })
    if (moved) yield* d.git.reset(labId)
    yield* d.repo.saveLink({
      labId,
      repo: repoUrl,
      repoKey: repoKeyOf(repoUrl),
      defaultBranch,
      autoPush: input.autoPushOnEdit ?? Option.match(current, { onNone: () => false, onSome: (l) => l.autoPush }),
      token: tokenChange(d, current, repoUrl, input.token)
    })
    yield* d.webhookLinks.invalidate
  })

/**
 * Link or change the link (absent fields keep their values); a new repository or branch is pulled afresh.
 * It runs exclusively with the lab's git jobs: a fetch in progress never sees its repository reset under it.
 */
const link = (d: SyncDeps, labId: LabId, input: Omit<LinkRepo, "labId">) =>
  Effect.gen(function* () {
    // where git traffic may go (README: "Outbound git traffic"); checked again on every connection
    if (input.repo !== undefined) {
      yield* Effect.mapError(d.git.checkRemote(input.repo), (refused) => new InvalidField({ field: "repo", problem: refused.message }))
    }
    yield* d.supervisor.exclusive(labId, saveLink(d, labId, input))
    yield* d.supervisor.requestPull(labId)
    return yield* status(d, labId)
  })

/** Spec 2.7: the secret is shown once, when created. */
const secret = (d: SyncDeps, labId: LabId) =>
  Effect.gen(function* () {
    const link = yield* linkOf(d, labId)
    const fresh = randomBytes(32).toString("hex")
    const created = yield* d.repo.setSecretOnce(labId, d.box.seal(fresh))
    if (created) yield* d.webhookLinks.invalidate
    const webhookUrl = new URL(`/api/webhooks/${hostOfRepo(link.repo)}`, d.baseUrl).toString()
    return created ? { secret: fresh, existed: false, webhookUrl } : { existed: true, webhookUrl }
  })

/** The sync routes' service: link, status, webhook secret, forced pull. */
export class Sync extends Effect.Service<Sync>()("Sync", {
  dependencies: [SyncRepo.Default, SyncSupervisor.Default, WebhookLinks.Default],
  effect: Effect.gen(function* () {
    const d: SyncDeps = {
      repo: yield* SyncRepo,
      supervisor: yield* SyncSupervisor,
      git: yield* Git,
      box: yield* SecretBox,
      baseUrl: yield* PublicBaseUrl,
      sql: yield* SqlClient.SqlClient,
      webhookLinks: yield* WebhookLinks
    }
    return {
      status: (labId: LabId) => status(d, labId),
      link: (labId: LabId, input: Omit<LinkRepo, "labId">) => link(d, labId, input),
      secret: (labId: LabId) => secret(d, labId),
      syncNow: (labId: LabId, subPath: Option.Option<string>) =>
        Effect.zipRight(linkOf(d, labId), d.supervisor.syncNow(labId, subPath))
    }
  })
}) {}
