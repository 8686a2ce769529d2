import { createHash, createHmac } from "node:crypto"
import { safeEqual } from "../auth/Secrets.js"

/**
 * The push webhooks of the git hosts this service understands: how each names
 * the event, the delivery and the repository, and how it signs the body.
 * Pure functions over headers and the raw body.
 */
export const GIT_HOSTS = ["github", "gitlab", "gitea", "forgejo", "bitbucket"] as const
export type GitHost = (typeof GIT_HOSTS)[number]

export const isGitHost = (s: string): s is GitHost => GIT_HOSTS.some((h) => h === s)

type Headers = Readonly<Record<string, string | undefined>>

export type HookEvent = "push" | "ping" | "other"

const hmacHex = (secret: string, body: string) => createHmac("sha256", secret).update(body, "utf8").digest("hex")

const stripPrefix = (value: string | undefined, prefix: string) =>
  value === undefined ? undefined : value.startsWith(prefix) ? value.slice(prefix.length) : undefined

/** Does the delivery carry this secret's signature (constant-time compare)? */
export const verifySignature = (host: GitHost, headers: Headers, rawBody: string, secret: string): boolean => {
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

const matches = (signature: string | undefined, secret: string, rawBody: string) =>
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
export const deliveryIdOf = (host: GitHost, headers: Headers, rawBody: string): string =>
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

/** How the payload names its repository: clone URLs, and `owner/name`. */
export const repositoryOf = (host: GitHost, payload: unknown): { readonly urls: ReadonlyArray<string>; readonly fullName: string | undefined } => {
  switch (host) {
    case "gitlab":
      return {
        urls: [get(payload, "project", "git_http_url"), get(payload, "project", "web_url"), get(payload, "repository", "git_http_url")]
          .map(str)
          .filter((u): u is string => u !== undefined),
        fullName: str(get(payload, "project", "path_with_namespace"))
      }
    case "bitbucket":
      return {
        urls: [str(get(payload, "repository", "links", "html", "href"))].filter((u): u is string => u !== undefined),
        fullName: str(get(payload, "repository", "full_name"))
      }
    default:
      return {
        urls: [get(payload, "repository", "clone_url"), get(payload, "repository", "html_url")]
          .map(str)
          .filter((u): u is string => u !== undefined),
        fullName: str(get(payload, "repository", "full_name"))
      }
  }
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
