import { Cache, Clock, Data, Duration, Effect, MutableHashSet, Option } from "effect"
import type { RepoLink } from "./RepoLink.js"
import { repoKeyOf } from "./RepoLink.js"
import { SecretBox } from "../common/SecretBox.js"
import { SyncRepo } from "./SyncRepo.js"
import type { RepositoryIdentity } from "./Webhooks.js"

/** What the receiver needs of a link: which lab, which branch, and whether it has a secret (opened once, kept in memory). */
export interface WebhookLink extends Pick<RepoLink, "labId" | "defaultBranch"> {
  readonly hasSecret: boolean
  /** None also when the stored secret cannot be opened (another master key): no signature matches it. */
  readonly secret: Option.Option<string>
}

interface RepositoryKey {
  readonly urls: ReadonlyArray<string>
  readonly fullNames: ReadonlyArray<string>
}

/** A cached answer older than this is looked up again in the background (it is still used meanwhile). */
export const WEBHOOK_LINKS_REFRESH = Duration.seconds(5)
/** Repositories remembered (a delivery naming an unknown repository is remembered too, as none). */
const CAPACITY = 10_000

/**
 * The labs a webhook delivery's repository is linked to, from memory: a delivery
 * never waits on the database (where pulls hold transactions) once its repository
 * was seen. An answer older than WEBHOOK_LINKS_REFRESH is used and refreshed in
 * the background; a link or secret changed through this instance empties the
 * cache at once. A delivery the cached answer would refuse (no lab, no secret,
 * a signature no cached secret matches) asks the database before it is refused.
 */
export class WebhookLinks extends Effect.Service<WebhookLinks>()("WebhookLinks", {
  dependencies: [SyncRepo.Default],
  scoped: Effect.gen(function* () {
    const repo = yield* SyncRepo
    const box = yield* SecretBox
    const scope = yield* Effect.scope

    /** A repository as a delivery names it, compared by value. */
    const keyOf = (identity: RepositoryIdentity): RepositoryKey =>
      Data.struct({
        urls: Data.array([...identity.urls].sort()),
        fullNames: Data.array(identity.fullNames.map((n) => n.toLowerCase()).sort())
      })

    /** The links of the labs whose repository the delivery names (by clone/web URL, or `owner/name`). */
    const lookup = ({ fullNames, urls }: RepositoryKey): Effect.Effect<ReadonlyArray<WebhookLink>> => {
      const keys = urls.flatMap((url) => {
        try {
          return [repoKeyOf(url)]
        } catch {
          return []
        }
      })
      const names = fullNames.length > 0 ? fullNames.map(Option.some) : [Option.none<string>()]
      return Effect.gen(function* () {
        const found = (yield* Effect.forEach(names, (name) => repo.linksMatching(keys, name))).flat()
        const unique = [...new Map(found.map((l) => [l.labId, l])).values()]
        return yield* Effect.forEach(unique, (l) =>
          Effect.map(
            l.webhookSecretSealed === null ? Effect.succeedNone : Effect.option(box.open(l.webhookSecretSealed)),
            (secret): WebhookLink => ({ labId: l.labId, defaultBranch: l.defaultBranch, hasSecret: l.webhookSecretSealed !== null, secret })
          )
        )
      })
    }

    // uninterruptible lookups: the first caller runs one for all who wait on it, and may go away
    const cache = yield* Cache.make({ capacity: CAPACITY, timeToLive: Duration.infinity, lookup: (key: RepositoryKey) => Effect.uninterruptible(lookup(key)) })
    const refreshing = MutableHashSet.empty<RepositoryKey>()

    /** Refresh an old entry in the background, once at a time per key. */
    const refreshIfOld = (key: RepositoryKey) =>
      Effect.gen(function* () {
        const stats = yield* cache.entryStats(key)
        const now = yield* Clock.currentTimeMillis
        if (Option.isNone(stats) || now - stats.value.loadedMillis < Duration.toMillis(WEBHOOK_LINKS_REFRESH) || MutableHashSet.has(refreshing, key)) return
        MutableHashSet.add(refreshing, key)
        yield* Effect.forkIn(Effect.ensuring(cache.refresh(key), Effect.sync(() => MutableHashSet.remove(refreshing, key))), scope)
      })

    /** The links, from memory when the repository was seen before. */
    const find = (identity: RepositoryIdentity) => {
      const key = keyOf(identity)
      return Effect.tap(cache.get(key), () => refreshIfOld(key))
    }

    /** The links as the database has them now (and remembered so). */
    const findFresh = (identity: RepositoryIdentity) => {
      const key = keyOf(identity)
      return Effect.zipRight(cache.refresh(key), cache.get(key))
    }

    /** A link or a secret changed: forget every answer. */
    const invalidate = cache.invalidateAll

    return { find, findFresh, invalidate }
  })
}) {}
