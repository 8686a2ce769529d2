import { Context } from "effect"
import { createHash, createHmac } from "node:crypto"
import { safeEqual } from "../auth/Secrets.js"
import { type KeyPath, scanJsonStrings } from "./JsonScan.js"

/**
 * The push webhooks of the git hosts this service understands: how each names
 * the event, the delivery and the repository, and how it signs the body.
 * Pure functions over headers and the raw body: signatures are computed over
 * the body's bytes as they arrived.
 */
export const GIT_HOSTS = ["github", "gitlab", "gitea", "forgejo", "bitbucket"] as const
export type GitHost = (typeof GIT_HOSTS)[number]

export const isGitHost = (s: string): s is GitHost => GIT_HOSTS.some((h) => h === s)

/**
 * Failed deliveries one client address may make in a calendar minute, whatever repositories they name
 * (WEBHOOK_FAILURES_PER_MINUTE); past them, 429 (see WebhookReceiver.ts).
 */
export class WebhookFailureLimit extends Context.Tag("WebhookFailureLimit")<WebhookFailureLimit, number>() {}

export const DEFAULT_WEBHOOK_FAILURES_PER_MINUTE = 10

type Headers = Readonly<Record<string, string | undefined>>

export type HookEvent = "push" | "ping" | "other"

/** A body as received (bytes), or as text (UTF-8). */
export type RawBody = string | Uint8Array

const hmacHex = (secret: string, body: RawBody) => createHmac("sha256", secret).update(body).digest("hex")

const stripPrefix = (value: string | undefined, prefix: string) =>
  value === undefined ? undefined : value.startsWith(prefix) ? value.slice(prefix.length) : undefined

/** Does the delivery carry this secret's signature (constant-time compare)? */
export const verifySignature = (host: GitHost, headers: Headers, rawBody: RawBody, secret: string): boolean => {
  switch (host) {
    case "gitlab":
      return headers["x-gitlab-token"] !== undefined && safeEqual(headers["x-gitlab-token"], secret)
    case "github":
      return matches(stripPrefix(headers["x-hub-signature-256"], "sha256="), secret, rawBody)
    case "bitbucket":
      return matches(stripPrefix(headers["x-hub-signature"], "sha256="), secret, rawBody)
    case "gitea":
      return matches(headers["x-gitea-signature"] ?? stripPrefix(headers["x-hub-signature-256"], "sha256="), secret, rawBody)
    case "forgejo":
      return matches(
        headers["x-forgejo-signature"] ?? headers["x-gitea-signature"] ?? stripPrefix(headers["x-hub-signature-256"], "sha256="),
        secret,
        rawBody
      )
  }
}

/** Does the delivery carry a signature (or GitLab's token) at all, in a header its host uses? */
export const isSigned = (host: GitHost, headers: Headers): boolean => {
  const present = (...names: ReadonlyArray<string>) => names.some((name) => headers[name] !== undefined)
  switch (host) {
    case "gitlab":
      return present("x-gitlab-token")
    case "github":
      return present("x-hub-signature-256")
    case "bitbucket":
      return present("x-hub-signature")
    case "gitea":
      return present("x-gitea-signature", "x-hub-signature-256")
    case "forgejo":
      return present("x-forgejo-signature", "x-gitea-signature", "x-hub-signature-256")
  }
}

const matches = (signature: string | undefined, secret: string, rawBody: RawBody) =>
  signature !== undefined && safeEqual(signature.toLowerCase(), hmacHex(secret, rawBody))

export const eventOf = (host: GitHost, headers: Headers): HookEvent => {
  const name = {
    github: headers["x-github-event"],
    gitlab: headers["x-gitlab-event"],
    gitea: headers["x-gitea-event"],
    forgejo: headers["x-forgejo-event"] ?? headers["x-gitea-event"],
    bitbucket: headers["x-event-key"]
  }[host]
  if (name === undefined) return "other"
  if (name === "push" || name === "Push Hook" || name === "repo:push") return "push"
  if (name === "ping" || name === "diagnostics:ping") return "ping"
  return "other"
}

/** The delivery id (the same on a redelivery); the body's hash when the host sends none. */
export const deliveryIdOf = (host: GitHost, headers: Headers, rawBody: RawBody): string =>
  ({
    github: headers["x-github-delivery"],
    gitlab: headers["x-gitlab-event-uuid"] ?? headers["idempotency-key"],
    gitea: headers["x-gitea-delivery"],
    forgejo: headers["x-forgejo-delivery"] ?? headers["x-gitea-delivery"],
    bitbucket: headers["x-request-uuid"] // not X-Hook-UUID: that names the webhook, the same on every delivery
  })[host] ?? `body-sha256:${createHash("sha256").update(rawBody).digest("hex")}`

const get = (value: unknown, ...path: ReadonlyArray<string>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null || !(key in current)) return undefined
    current = Reflect.get(current, key)
  }
  return current
}

const str = (value: unknown): string | undefined => (typeof value === "string" && value.length > 0 ? value : undefined)

/** Where each host's payload names its repository: clone or web URLs, and `owner/name`. */
const IDENTITY: Record<"github" | "gitlab" | "bitbucket", { readonly urls: ReadonlyArray<KeyPath>; readonly names: ReadonlyArray<KeyPath> }> = {
  github: {
    urls: [["repository", "clone_url"], ["repository", "html_url"]],
    names: [["repository", "full_name"]]
  },
  gitlab: {
    urls: [["project", "git_http_url"], ["project", "web_url"], ["repository", "git_http_url"]],
    names: [["project", "path_with_namespace"]]
  },
  bitbucket: {
    urls: [["repository", "links", "html", "href"]],
    names: [["repository", "full_name"]]
  }
}

export interface RepositoryIdentity {
  readonly urls: ReadonlyArray<string>
  /** `owner/name` as the payload spells it (a payload repeating the key gives several). */
  readonly fullNames: ReadonlyArray<string>
  /** Whether the text is a JSON object at all. */
  readonly json: boolean
}

/**
 * How the payload's text names its repository, read by a lexical scan
 * (JsonScan.ts): nothing is parsed before the signature is verified.
 */
export const repositoryIn = (host: GitHost, text: string): RepositoryIdentity => {
  const shape = IDENTITY[host === "gitlab" || host === "bitbucket" ? host : "github"]
  const scan = scanJsonStrings(text, [...shape.urls, ...shape.names])
  const at = (paths: ReadonlyArray<KeyPath>) => paths.flatMap((p) => scan.values.get(p.join("/")) ?? [])
  return { urls: at(shape.urls), fullNames: at(shape.names), json: scan.object }
}

/**
 * The JSON text of a delivery: the body, or for GitHub's form encoding
 * (`application/x-www-form-urlencoded`) its `payload` field, percent-decoded.
 * Undefined when a form has no such field or it does not decode.
 */
export const documentOf = (contentType: string | undefined, text: string): string | undefined => {
  if (!contentType?.startsWith("application/x-www-form-urlencoded")) return text
  for (const field of text.split("&")) {
    if (!field.startsWith("payload=")) continue
    try {
      return decodeURIComponent(field.slice("payload=".length).replace(/\+/g, " "))
    } catch {
      return undefined
    }
  }
  return undefined
}

/** The branches a push moved (Bitbucket can move several in one delivery). */
export const pushedBranchesOf = (host: GitHost, payload: unknown): ReadonlyArray<string> => {
  if (host === "bitbucket") {
    const changes = get(payload, "push", "changes")
    if (!Array.isArray(changes)) return []
    return changes.flatMap((change: unknown) =>
      get(change, "new", "type") === "branch" && str(get(change, "new", "name")) ? [String(get(change, "new", "name"))] : []
    )
  }
  const ref = str(get(payload, "ref"))
  return ref?.startsWith("refs/heads/") ? [ref.slice("refs/heads/".length)] : []
}

/** Which host segment a repository URL's webhook should use (for `webhookUrl`). */
export const hostOfRepo = (repoUrl: string): GitHost => {
  const host = new URL(repoUrl).hostname
  if (host.includes("gitlab")) return "gitlab"
  if (host.includes("bitbucket")) return "bitbucket"
  if (host.includes("codeberg") || host.includes("forgejo")) return "forgejo"
  if (host.includes("gitea")) return "gitea"
  return "github"
}
