import { Clock, Effect, Option } from "effect"
import { InvalidField, NotAuthenticated, NotConfigured, NotKnown, OverRateLimit } from "../common/DomainErrors.js"
import { problemWith } from "../common/TextHygiene.js"
import { reportWindow } from "../common/RequestContext.js"
import { systemLab } from "../labs/LabId.js"
import { MINUTE_MILLIS, type RateDecision, RateLimits } from "../ratelimit/RateLimits.js"
import type { WebhookAnswer } from "./RepoLink.js"
import { type WebhookLink, WebhookLinks } from "./WebhookLinks.js"
import { SyncSupervisor } from "./SyncSupervisor.js"
import {
  deliveryIdOf,
  documentOf,
  eventOf,
  type GitHost,
  isGitHost,
  isSigned,
  pushedBranchesOf,
  repositoryIn,
  type RepositoryIdentity,
  verifySignature,
  WebhookFailureLimit
} from "./Webhooks.js"

const notJson = () => new InvalidField({ field: "body", problem: "is not a JSON payload" })

type Headers = Readonly<Record<string, string | undefined>>

/** Delivery ids remembered per generation: between this many and twice as many of the newest are recognised. */
const DELIVERIES_REMEMBERED = 50_000

/**
 * The delivery ids this instance has seen, newest first, in two generations: when the current one is full it
 * becomes the previous one (the older is dropped). Checked and noted in one synchronous step.
 */
const recentDeliveries = (perGeneration: number) => {
  let current = new Set<string>()
  let previous = new Set<string>()
  return {
    firstTime: (id: string): boolean => {
      if (current.has(id) || previous.has(id)) return false
      if (current.size >= perGeneration) {
        previous = current
        current = new Set()
      }
      current.add(id)
      return true
    }
  }
}

/**
 * Failed deliveries are counted per client address, in two counts. What no git host sends (a body over the limit, not
 * JSON, no repository in it) is refused before the body is read once over the limit. A delivery naming a repository
 * that is refused (no lab, no secret, a wrong signature: one answer for all three) counts against the address whatever
 * the repository, so guessing across repositories is throttled; over the limit, only a delivery a known secret signed
 * is still served. Git hosts deliver every repository's hooks from a few shared addresses: a tenant whose own hook
 * keeps failing gets those addresses throttled only for deliveries that fail anyway.
 */
const garbageFrom = (address: string) => `webhook-failures:${address}`
const refusedFrom = (address: string) => `webhook-refused:${address}`

/** What a delivery is about, read without parsing it: its host, its JSON text, the repository it names. */
const identify = (hostSegment: string, headers: Headers, body: Uint8Array) =>
  Effect.gen(function* () {
    if (!isGitHost(hostSegment)) {
      return yield* new NotKnown({ reason: `unknown git host ${hostSegment}: use github, gitlab, gitea, forgejo or bitbucket` })
    }
    const host: GitHost = hostSegment
    const document = documentOf(headers["content-type"], Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"))
    if (document === undefined) return yield* notJson()
    const identity = repositoryIn(host, document)
    if (!identity.json) return yield* notJson()
    const hostile = [...identity.fullNames, ...identity.urls].map(problemWith).find((p) => p !== undefined)
    if (hostile !== undefined) return yield* new InvalidField({ field: "repository", problem: hostile })
    const named = identity.fullNames[0] ?? identity.urls[0]
    if (named === undefined) return yield* new NotKnown({ reason: "the payload names no repository" })
    return { host, document, identity }
  })

/**
 * The refusal of a delivery no secret of the repository's labs signed. It depends on the delivery alone, never on
 * whether a lab is linked to the repository or has a secret: an unsigned delivery is 412 (its hook has no secret), a
 * signed one 401.
 */
const refusal = (host: GitHost, headers: Headers) =>
  isSigned(host, headers)
    ? new NotAuthenticated({ reason: "the webhook signature does not match a webhook secret of this repository's lab" })
    : new NotConfigured({
        reason: "the delivery is not signed: give the webhook the lab's secret (create one with POST /api/v1/sync/secret)"
      })

/** The links whose secret signed the delivery; none is a refusal (see `refusal`). */
const signedBy =
  (host: GitHost, headers: Headers, body: Uint8Array) =>
  (links: ReadonlyArray<WebhookLink>) => {
    const verified = links.filter((l) => Option.isSome(l.secret) && verifySignature(host, headers, body, l.secret.value))
    return verified.length === 0 ? Effect.fail(refusal(host, headers)) : Effect.succeed(verified)
  }

/**
 * POST /api/webhooks/<git_host>: find the labs the delivery names (a lexical
 * scan of the raw text), verify the signature over the raw bytes against their
 * secrets, and only then parse the payload; deduplicate, enqueue, answer. It
 * waits neither for git nor for the database: the links and secrets come from
 * memory (WebhookLinks), duplicates are recognised in memory, and the pull is a
 * flag the lab's worker reads (SyncSupervisor.requestPull).
 */
export class WebhookReceiver extends Effect.Service<WebhookReceiver>()("WebhookReceiver", {
  dependencies: [WebhookLinks.Default, SyncSupervisor.Default, RateLimits.Default],
  effect: Effect.gen(function* () {
    const links = yield* WebhookLinks
    const recent = recentDeliveries(DELIVERIES_REMEMBERED)
    const supervisor = yield* SyncSupervisor
    const rateLimits = yield* RateLimits
    const failureLimit = yield* WebhookFailureLimit

    /** The window of `key` when it is over the limit this minute. */
    const overLimit = (key: string) =>
      Effect.map(rateLimits.count(key, failureLimit, MINUTE_MILLIS, 0), (window) =>
        window.remaining > 0 ? Option.none<RateDecision>() : Option.some(window)
      )

    const tooMany = (account: string, window: RateDecision): Effect.Effect<never, OverRateLimit> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const retryAfter = Math.max(1, Math.ceil(window.reset - now / 1000))
        const message = `${failureLimit} failed webhook deliveries from this address this minute; retry in ${retryAfter} s`
        return Effect.zipRight(reportWindow({ account, decision: { ...window, allowed: false, retryAfter } }), Effect.fail(new OverRateLimit({ reason: message, retryAfter })))
      })

    /** 429 for an address that sent too much of what no git host sends this minute (checked before the body is read). */
    const admit = (address: string) => {
      const account = garbageFrom(address)
      return Effect.flatMap(overLimit(account), Option.match({ onNone: () => Effect.void, onSome: (window) => tooMany(account, window) }))
    }

    /** Count a delivery no git host sends. */
    const failed = (address: string) => Effect.asVoid(rateLimits.count(garbageFrom(address), failureLimit, MINUTE_MILLIS))

    /**
     * The labs whose secret signed the delivery. Under the address's limit, what memory would refuse is checked
     * against the database before it is refused, and a refusal is counted; over it, a delivery no secret in memory
     * signed is 429.
     */
    const verified = (
      address: string,
      host: GitHost,
      headers: Headers,
      body: Uint8Array,
      identity: RepositoryIdentity
    ) =>
      Effect.flatMap(overLimit(refusedFrom(address)), (over): Effect.Effect<ReadonlyArray<WebhookLink>, NotAuthenticated | NotConfigured | OverRateLimit> => {
        const signed = signedBy(host, headers, body)
        const fromMemory = Effect.flatMap(links.find(identity), signed)
        if (Option.isSome(over)) return Effect.catchAll(fromMemory, () => tooMany(refusedFrom(address), over.value))
        return Effect.tapError(Effect.orElse(fromMemory, () => Effect.flatMap(links.findFresh(identity), signed)), () =>
          rateLimits.count(refusedFrom(address), failureLimit, MINUTE_MILLIS)
        )
      })

    /** Receive a delivery from `address`: a failure before it names a repository counts as garbage (see garbageFrom). */
    const receive = (address: string, hostSegment: string, headers: Headers, body: Uint8Array) =>
      Effect.gen(function* () {
        const delivery = yield* Effect.tapError(identify(hostSegment, headers, body), () => failed(address))
        const labs = yield* verified(address, delivery.host, headers, body, delivery.identity)
        return yield* forLabs(delivery.host, headers, body, delivery.document, labs)
      })

    /** The rest of a delivery the labs' secrets signed: parse it, deduplicate, enqueue. */
    const forLabs = (
      host: GitHost,
      headers: Headers,
      body: Uint8Array,
      document: string,
      verified: ReadonlyArray<WebhookLink>
    ) =>
      Effect.gen(function* () {
        // signed by a lab's secret: now the payload may be parsed
        const payload = yield* Effect.try({ try: (): unknown => JSON.parse(document), catch: notJson })
        const event = eventOf(host, headers)
        const labs = verified.map((l) => l.labId)
        if (event === "ping") return answer("ping", "pong", labs)
        if (event === "other") return answer("other", "ignored", labs, "only push events are synced")

        const branches = pushedBranchesOf(host, payload)
        const targets = verified.filter((l) => branches.includes(l.defaultBranch))
        if (targets.length === 0) return answer("push", "ignored", labs, "not a push to the default branch")
        const deliveryId = deliveryIdOf(host, headers, body)
        const queued: Array<string> = []
        for (const link of targets) {
          if (recent.firstTime(`${host}\u0000${deliveryId}\u0000${link.labId}`)) {
            yield* supervisor.requestPull(systemLab(link.labId))
            queued.push(link.labId)
          }
        }
        return queued.length > 0 ? answer("push", "queued", queued) : answer("push", "duplicate", targets.map((l) => l.labId))
      })

    return { admit, failed, receive }
  })
}) {}

const answer = (event: WebhookAnswer["event"], action: WebhookAnswer["action"], labs: ReadonlyArray<string>, reason?: string): WebhookAnswer => ({
  ok: true,
  event,
  action,
  labs,
  ...(reason ? { reason } : {})
})
