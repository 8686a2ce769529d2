import { Clock, Effect, Option } from "effect"
import { NotFound, PreconditionFailed, RateLimited, Unauthorized, ValidationError } from "../http/Errors.js"
import { problemWith } from "../http/InputCheck.js"
import { reportWindow } from "../http/RequestContext.js"
import { systemLab } from "../labs/LabId.js"
import { MINUTE_MILLIS, RateLimits } from "../ratelimit/RateLimits.js"
import type { WebhookAnswer } from "./RepoLink.js"
import { type WebhookLink, WebhookLinks } from "./WebhookLinks.js"
import { SyncSupervisor } from "./SyncSupervisor.js"
import {
  deliveryIdOf,
  documentOf,
  eventOf,
  type GitHost,
  isGitHost,
  pushedBranchesOf,
  repositoryIn,
  type RepositoryIdentity,
  verifySignature,
  WebhookFailureLimit
} from "./Webhooks.js"

const notJson = () => new ValidationError({ message: "the webhook body is not a JSON payload" })

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
 * Failures are counted per client address while a delivery names no repository (a body over the limit, not
 * JSON, no repository in it: a git host never sends those), and per address and repository once it does (no
 * lab, no secret, a wrong signature). Git hosts deliver every repository's hooks from a few shared addresses:
 * a tenant whose own hook keeps failing must not get those addresses throttled for every other lab.
 */
const failuresOf = (address: string, repository?: string) =>
  repository === undefined ? `webhook-failures:${address}` : `webhook-failures:${address}:${repository}`

/** What a delivery is about, read without parsing it: its host, its JSON text, the repository it names. */
const identify = (hostSegment: string, headers: Readonly<Record<string, string | undefined>>, body: Uint8Array) =>
  Effect.gen(function* () {
    if (!isGitHost(hostSegment)) {
      return yield* new NotFound({ message: `unknown git host ${hostSegment}: use github, gitlab, gitea, forgejo or bitbucket` })
    }
    const host: GitHost = hostSegment
    const document = documentOf(headers["content-type"], Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"))
    if (document === undefined) return yield* notJson()
    const identity = repositoryIn(host, document)
    if (!identity.json) return yield* notJson()
    const hostile = [...identity.fullNames, ...identity.urls].map(problemWith).find((p) => p !== undefined)
    if (hostile !== undefined) return yield* new ValidationError({ message: `repository: ${hostile}` })
    const named = identity.fullNames[0] ?? identity.urls[0]
    if (named === undefined) return yield* new NotFound({ message: "the payload names no repository" })
    return { host, document, identity, repository: named.toLowerCase() }
  })

/** The links whose secret signed the delivery; refused as a git host would need to hear it. */
const signedBy =
  (host: GitHost, headers: Readonly<Record<string, string | undefined>>, body: Uint8Array, identity: RepositoryIdentity) =>
  (links: ReadonlyArray<WebhookLink>) =>
    Effect.gen(function* () {
      if (links.length === 0) {
        return yield* new NotFound({
          message: `no lab is linked to ${identity.fullNames[0] ?? identity.urls[0] ?? "this repository"}`
        })
      }
      if (!links.some((l) => l.hasSecret)) {
        return yield* new PreconditionFailed({
          message: "the lab has no webhook secret yet: create one with POST /api/v1/sync/secret"
        })
      }
      const verified = links.filter((l) => Option.isSome(l.secret) && verifySignature(host, headers, body, l.secret.value))
      if (verified.length === 0) return yield* new Unauthorized({ message: "the webhook signature does not match the secret" })
      return verified
    })

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

    /** 429 for an address (or an address and repository) that failed too often this minute. */
    const admit = (address: string, repository?: string) =>
      Effect.flatMap(rateLimits.count(failuresOf(address, repository), failureLimit, MINUTE_MILLIS, 0), (window) =>
        window.remaining > 0
          ? Effect.void
          : Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const retryAfter = Math.max(1, Math.ceil(window.reset - now / 1000))
              const what = repository === undefined ? "from this address" : `for ${repository} from this address`
              const message = `${failureLimit} failed webhook deliveries ${what} this minute; retry in ${retryAfter} s`
              return Effect.zipRight(reportWindow({ ...window, allowed: false, retryAfter }), Effect.fail(new RateLimited({ message })))
            })
      )

    /** Count a failed delivery. */
    const failed = (address: string, repository?: string) =>
      Effect.asVoid(rateLimits.count(failuresOf(address, repository), failureLimit, MINUTE_MILLIS))

    /**
     * Receive a delivery from `address`. A failure before it names a repository counts against the address; after,
     * against the address and that repository (see failuresOf).
     */
    const receive = (address: string, hostSegment: string, headers: Readonly<Record<string, string | undefined>>, body: Uint8Array) =>
      Effect.gen(function* () {
        const delivery = yield* Effect.tapError(identify(hostSegment, headers, body), () => failed(address))
        yield* admit(address, delivery.repository)
        return yield* Effect.tapError(
          forRepository(delivery.host, headers, body, delivery.document, delivery.identity),
          () => failed(address, delivery.repository)
        )
      })

    /** The rest of a delivery that names a repository: its labs, their secrets, the signature, then the payload. */
    const forRepository = (
      host: GitHost,
      headers: Readonly<Record<string, string | undefined>>,
      body: Uint8Array,
      document: string,
      identity: RepositoryIdentity
    ) =>
      Effect.gen(function* () {
        // from memory; what memory would refuse is checked against the database before it is
        const verified = yield* Effect.orElse(Effect.flatMap(links.find(identity), signedBy(host, headers, body, identity)), () =>
          Effect.flatMap(links.findFresh(identity), signedBy(host, headers, body, identity))
        )

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
