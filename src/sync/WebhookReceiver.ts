import { Effect, Option } from "effect"
import { SecretBox } from "../common/SecretBox.js"
import { NotFound, PreconditionFailed, Unauthorized, ValidationError } from "../http/Errors.js"
import { repoKeyOf } from "./RepoLink.js"
import { SyncRepo } from "./SyncRepo.js"
import { SyncSupervisor } from "./SyncSupervisor.js"
import { deliveryIdOf, eventOf, type GitHost, isGitHost, pushedBranchesOf, repositoryOf, verifySignature } from "./Webhooks.js"

/** The receiver's answer (bare, like the other sync bodies). */
export interface WebhookAnswer {
  readonly ok: true
  readonly event: "push" | "ping" | "other"
  /** queued: a pull was enqueued; duplicate: this delivery was seen before; ignored: nothing to do. */
  readonly action: "queued" | "duplicate" | "ignored" | "pong"
  readonly labs: ReadonlyArray<string>
  readonly reason?: string
}

const parsePayload = (contentType: string | undefined, raw: string): Effect.Effect<unknown, ValidationError> =>
  Effect.try({
    try: (): unknown => {
      // GitHub's default content type sends the JSON as the form field `payload`
      if (contentType?.startsWith("application/x-www-form-urlencoded")) {
        const payload = new URLSearchParams(raw).get("payload")
        if (payload === null) throw new Error("no payload field")
        return JSON.parse(payload)
      }
      return JSON.parse(raw)
    },
    catch: () => new ValidationError({ message: "the webhook body is not a JSON payload" })
  })

/**
 * POST /api/webhooks/<git_host>: verify, deduplicate, enqueue, answer. It never
 * waits for git: the lab's worker pulls in the background.
 */
export class WebhookReceiver extends Effect.Service<WebhookReceiver>()("WebhookReceiver", {
  dependencies: [SyncRepo.Default, SyncSupervisor.Default],
  effect: Effect.gen(function* () {
    const repo = yield* SyncRepo
    const supervisor = yield* SyncSupervisor
    const box = yield* SecretBox

    const receive = (hostSegment: string, headers: Readonly<Record<string, string | undefined>>, raw: string) =>
      Effect.gen(function* () {
        if (!isGitHost(hostSegment)) {
          return yield* new NotFound({ message: `unknown git host ${hostSegment}: use github, gitlab, gitea, forgejo or bitbucket` })
        }
        const host: GitHost = hostSegment
        const payload = yield* parsePayload(headers["content-type"], raw)
        const repository = repositoryOf(host, payload)
        const keys = repository.urls.flatMap((url) => {
          try {
            return [repoKeyOf(url)]
          } catch {
            return []
          }
        })
        const links = yield* repo.linksMatching(keys, Option.fromNullable(repository.fullName))
        if (links.length === 0) {
          return yield* new NotFound({ message: `no lab is linked to ${repository.fullName ?? repository.urls[0] ?? "this repository"}` })
        }
        const withSecret = links.filter((l) => l.webhookSecretSealed !== null)
        if (withSecret.length === 0) {
          return yield* new PreconditionFailed({
            message: "the lab has no webhook secret yet: create one with POST /api/v1/sync/secret"
          })
        }
        const verified = yield* Effect.filter(withSecret, (link) =>
          Effect.map(
            Effect.option(box.open(link.webhookSecretSealed ?? "")),
            (secret) => Option.isSome(secret) && verifySignature(host, headers, raw, secret.value)
          )
        )
        if (verified.length === 0) return yield* new Unauthorized({ message: "the webhook signature does not match the secret" })

        const event = eventOf(host, headers)
        const labs = verified.map((l) => l.labId)
        if (event === "ping") return answer("ping", "pong", labs)
        if (event === "other") return answer("other", "ignored", labs, "only push events are synced")

        const branches = pushedBranchesOf(host, payload)
        const targets = verified.filter((l) => branches.includes(l.defaultBranch))
        if (targets.length === 0) return answer("push", "ignored", labs, "not a push to the default branch")
        const deliveryId = deliveryIdOf(host, headers, raw)
        const queued: Array<string> = []
        for (const link of targets) {
          if (yield* repo.firstDelivery(host, deliveryId, link.labId)) {
            yield* supervisor.requestPull(link.labId)
            queued.push(link.labId)
          }
        }
        return queued.length > 0 ? answer("push", "queued", queued) : answer("push", "duplicate", targets.map((l) => l.labId))
      })

    return { receive }
  })
}) {}

const answer = (event: WebhookAnswer["event"], action: WebhookAnswer["action"], labs: ReadonlyArray<string>, reason?: string): WebhookAnswer => ({
  ok: true,
  event,
  action,
  labs,
  ...(reason ? { reason } : {})
})
