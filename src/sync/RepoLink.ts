import { Schema } from "effect"
import { Body, LabRef } from "../common/Schemas.js"

/** A lab's linked repository, as stored (secrets sealed). */
export interface RepoLink {
  readonly labId: string
  readonly repo: string
  readonly repoKey: string
  readonly defaultBranch: string
  readonly autoPush: boolean
  readonly tokenSealed: string | null
  /** The repository (its URL as linked) the token was given for: it is never sent to another one. */
  readonly tokenRepo: string | null
  readonly webhookSecretSealed: string | null
  readonly lastSyncAt: Date | null
  readonly lastSyncSha: string | null
  readonly lastError: string | null
  readonly lastErrorAt: Date | null
}

export const RepoUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      if ((url.protocol !== "https:" && url.protocol !== "http:") || url.pathname.length <= 1) return "must be an http(s) clone URL"
      if (url.username || url.password) return "must not hold credentials (send the token separately)"
      // git appends /info/refs…: a query or fragment would send the request somewhere else than the repository
      if (s.includes("?") || s.includes("#")) return "must not have a query or a fragment"
      return true
    } catch {
      return "must be an http(s) clone URL"
    }
  })
).annotations({ description: "the repository's http(s) clone URL" })

/** git's check-ref-format for a branch, on the characters we allow: no empty component, none starting with `.` or
 * ending with `.lock`, no `..`, no trailing `.` (git refuses `refs/heads/.`, and the link would fail every sync). */
const isBranchName = (name: string): boolean =>
  name.length >= 1 &&
  name.length <= 200 &&
  /^[A-Za-z0-9._/-]+$/.test(name) &&
  !name.includes("..") &&
  !name.endsWith(".") &&
  name.split("/").every((part) => part.length > 0 && !part.startsWith(".") && !part.endsWith(".lock"))

export const BranchName = Schema.String.pipe(Schema.filter(isBranchName, { message: () => "must be a valid branch name" }))

/** PATCH /api/v1/sync: link a repository or change the link; absent fields keep their values. */
export const LinkRepo = Body({
  labId: LabRef,
  repo: Schema.optional(RepoUrl).annotations({ description: "required to link a lab that has no repository yet" }),
  defaultBranch: Schema.optional(BranchName),
  autoPushOnEdit: Schema.optional(Schema.Boolean),
  token: Schema.optional(
    Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096))).annotations({
      description:
        "credential for fetch and push (a token, or user:password); stored encrypted, never returned; null removes it. " +
        "It is bound to the repository: a link to another repository (another origin or path) drops it unless this request gives one"
    })
  )
})
export type LinkRepo = typeof LinkRepo.Type

/** A write the outbox set aside: git will never commit it, so the writes after it go on without it. */
export const SetAsideWrite = Schema.Struct({
  path: Schema.String,
  operation: Schema.Literal("write", "delete"),
  reason: Schema.String,
  at: Schema.Number.annotations({ description: "when it was set aside, Unix time in milliseconds" })
}).annotations({ identifier: "SetAsideWrite" })
export type SetAsideWrite = typeof SetAsideWrite.Type

/** Spec 2.5, plus what users need to see of the sync's health. */
export const SyncStatus = Schema.Struct({
  repo: Schema.String,
  defaultBranch: Schema.String,
  lastSyncAt: Schema.NullOr(Schema.Number).annotations({ description: "Unix time in milliseconds" }),
  lastSyncSha: Schema.NullOr(Schema.String),
  autoPushOnEdit: Schema.Boolean,
  lastError: Schema.NullOr(Schema.Struct({ message: Schema.String, at: Schema.Number })),
  pendingCommits: Schema.Number.annotations({ description: "writes acknowledged but not yet pushed" }),
  setAsideCommits: Schema.Number.annotations({ description: "writes that can never be pushed, set aside (see setAside)" }),
  setAside: Schema.Array(SetAsideWrite).annotations({ description: "the newest writes set aside, at most 20, newest first" }),
  hasToken: Schema.Boolean.annotations({ description: "a token is stored for the linked repository" }),
  hasWebhookSecret: Schema.Boolean
}).annotations({ identifier: "SyncStatus" })
export type SyncStatus = typeof SyncStatus.Type

/** Spec 2.6. */
export const SyncResult = Schema.Struct({
  ok: Schema.Boolean,
  pulled: Schema.Number.annotations({ description: "files added" }),
  updated: Schema.Number,
  skipped: Schema.Number.annotations({ description: "files the sync rules leave out (binary, too large, skipped paths)" }),
  removed: Schema.Number,
  sha: Schema.String.annotations({ description: "commit id synced (empty for an empty repository)" })
}).annotations({ identifier: "SyncResult" })
export type SyncResult = typeof SyncResult.Type

/** Spec 2.7. */
export const WebhookSecretResult = Schema.Struct({
  secret: Schema.optional(Schema.String).annotations({ description: "64 hex characters, only when just created" }),
  existed: Schema.Boolean,
  webhookUrl: Schema.String
}).annotations({ identifier: "WebhookSecretResult" })

/** `host/owner/name`, lower case, without `.git`: how webhooks find the lab. */
export const repoKeyOf = (url: string): string => {
  const u = new URL(url)
  return `${u.host}${u.pathname}`.toLowerCase().replace(/\.git$/, "").replace(/\/+$/, "")
}

/**
 * `scheme://host[:port]` as a browser compares origins: host in lower case (IDN in
 * punycode), default ports (80, 443) dropped; undefined when `url` does not parse.
 */
export const originOf = (url: string): string | undefined => {
  try {
    const origin = new URL(url).origin
    return origin === "null" ? undefined : origin
  } catch {
    return undefined
  }
}

/** Do two URLs (or origins) name the same origin? False when either does not parse. */
export const sameOrigin = (a: string, b: string): boolean => {
  const origin = originOf(a)
  return origin !== undefined && origin === originOf(b)
}

/**
 * Hosts known to treat repository paths case-insensitively and `name` as `name.git`: there a path is compared as
 * they resolve it. Any other host (a self-hosted forge, a plain git http-backend on a file system) is compared
 * exactly: `a` and `A`, `x` and `x.git` may be different repositories there.
 */
const FOLDING_HOSTS = new Set(["github.com", "gitlab.com", "bitbucket.org", "codeberg.org"])

/**
 * The repository a URL names, as its host tells repositories apart: origin and path (dot segments resolved,
 * trailing slashes dropped; case and one `.git` suffix folded on FOLDING_HOSTS). Undefined when it does not parse.
 */
export const repositoryOf = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    if (parsed.origin === "null") return undefined
    let path = parsed.pathname
    while (path.endsWith("/")) path = path.slice(0, -1)
    if (FOLDING_HOSTS.has(parsed.hostname)) {
      path = path.toLowerCase()
      if (path.endsWith(".git")) path = path.slice(0, -".git".length)
    }
    return `${parsed.origin}${path}`
  } catch {
    return undefined
  }
}

/** Do two URLs name the same repository (see repositoryOf)? False when either does not parse. */
export const sameRepository = (a: string, b: string): boolean => {
  const repository = repositoryOf(a)
  return repository !== undefined && repository === repositoryOf(b)
}

/**
 * Is the stored token the sync's to send: one given for the repository linked now? A token without its
 * repository (given before tokens were bound to repositories and not carried over, or restored from a backup made
 * before) is not: it waits for a new one.
 */
export const tokenIsBound = (link: RepoLink): boolean =>
  link.tokenSealed !== null && link.tokenRepo !== null && sameRepository(link.tokenRepo, link.repo)

/** `owner/name` for messages. */
export const repoNameOf = (url: string): string =>
  new URL(url).pathname.replace(/^\/+/, "").replace(/\.git$/, "").replace(/\/+$/, "")

/**
 * The webhook receiver's answer (bare, like the other sync bodies). queued: a pull was enqueued; duplicate: this
 * delivery was seen before; ignored: nothing to do; pong: a ping.
 */
export const WebhookAnswer = Schema.Struct({
  ok: Schema.Literal(true),
  event: Schema.Literal("push", "ping", "other"),
  action: Schema.Literal("queued", "duplicate", "ignored", "pong"),
  labs: Schema.Array(Schema.String),
  reason: Schema.optional(Schema.String)
}).annotations({ identifier: "WebhookAnswer" })
export type WebhookAnswer = typeof WebhookAnswer.Type
