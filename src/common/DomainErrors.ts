import { Effect, Option, Schema } from "effect"

/**
 * Failures of the domain, with the data that explains them. Services fail with these (and never with HTTP
 * errors); each edge maps them: `src/http/DomainErrorsHttp.ts` to the error envelope and its status.
 */

/** 404: the lab has no `resource` with this id (another lab's is as absent as a missing one). */
export class NotFoundInLab extends Schema.TaggedError<NotFoundInLab>()("NotFoundInLab", {
  resource: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `no ${this.resource} ${this.id} in this lab`
  }
}

/** 422: a field is well formed but names something it cannot (another lab's resource, a retired agent…). */
export class InvalidField extends Schema.TaggedError<InvalidField>()("InvalidField", {
  field: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.field}: ${this.problem}`
  }
}

/** 409: the request is valid but the resource's state (or a name already taken) does not allow it now. */
export class StateConflict extends Schema.TaggedError<StateConflict>()("StateConflict", {
  resource: Schema.String,
  id: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return this.problem
  }
}

/** 409: a lifecycle does not allow this move (`allowed` empty: `from` is a final state). */
export class TransitionRefused extends Schema.TaggedError<TransitionRefused>()("TransitionRefused", {
  what: Schema.String,
  from: Schema.String,
  to: Schema.String,
  allowed: Schema.Array(Schema.String)
}) {
  override get message() {
    return this.allowed.length === 0
      ? `${this.what} is ${this.from}, a final state: it cannot become ${this.to}`
      : `${this.what} is ${this.from}: it can become ${this.allowed.join(", ")}, not ${this.to}`
  }
}

/** 401: no credential, or one that proves nothing (unknown, revoked, expired, badly signed). */
export class NotAuthenticated extends Schema.TaggedError<NotAuthenticated>()("NotAuthenticated", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 403: the credential is known but may not do this (another lab, a scope it lacks, an operator's action). */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()("AccessDenied", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 404: no lab by this id or slug (told to the operator; anyone else is denied whether or not it exists). */
export class UnknownLab extends Schema.TaggedError<UnknownLab>()("UnknownLab", { ref: Schema.String }) {
  override get message() {
    return `no lab ${this.ref}`
  }
}

/** 404: something a request names outside any lab's resources (a git host, a webhook's repository). */
export class NotKnown extends Schema.TaggedError<NotKnown>()("NotKnown", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 429: a rate window is spent; `retryAfter` seconds until it has room again. */
export class OverRateLimit extends Schema.TaggedError<OverRateLimit>()("OverRateLimit", {
  reason: Schema.String,
  retryAfter: Schema.Number
}) {
  override get message() {
    return this.reason
  }
}

/** 403 quota_exceeded: a lab's allocation (keys, pods, stored bytes, records, backups) would be passed. */
export class OverQuota extends Schema.TaggedError<OverQuota>()("OverQuota", { quota: Schema.String, reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 412: the lab lacks a setting this needs (a webhook secret, a link). */
export class NotConfigured extends Schema.TaggedError<NotConfigured>()("NotConfigured", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 502: a provider the service depends on (a pod provider) failed. */
export class UpstreamFailed extends Schema.TaggedError<UpstreamFailed>()("UpstreamFailed", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 507: the disk is below its reserve; writes are refused until space is freed (reads go on). */
export class OutOfSpace extends Schema.TaggedError<OutOfSpace>()("OutOfSpace", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** 503: the service cannot take this now (stopping, busy); nothing was done and the request may be sent again. */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

export type DomainError =
  | NotFoundInLab
  | InvalidField
  | StateConflict
  | TransitionRefused
  | NotAuthenticated
  | AccessDenied
  | UnknownLab
  | NotKnown
  | OverRateLimit
  | OverQuota
  | NotConfigured
  | UpstreamFailed
  | Unavailable
  | OutOfSpace

const DOMAIN_TAGS: ReadonlySet<string> = new Set<DomainError["_tag"]>([
  "NotFoundInLab",
  "InvalidField",
  "StateConflict",
  "TransitionRefused",
  "NotAuthenticated",
  "AccessDenied",
  "UnknownLab",
  "NotKnown",
  "OverRateLimit",
  "OverQuota",
  "NotConfigured",
  "UpstreamFailed",
  "Unavailable",
  "OutOfSpace"
])

export const isDomainError = (u: unknown): u is DomainError =>
  u instanceof Error && "_tag" in u && typeof u._tag === "string" && DOMAIN_TAGS.has(u._tag)

/** The value found, or NotFoundInLab naming what was looked for. */
export const orNotFound =
  (resource: string, id: string) =>
  <A, E, R>(found: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E | NotFoundInLab, R> =>
    Effect.flatMap(
      found,
      Option.match({ onNone: () => Effect.fail(new NotFoundInLab({ resource, id })), onSome: Effect.succeed })
    )
