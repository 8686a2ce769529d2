import { Context, type Effect, type Option, Schema } from "effect"

/** Where a lab's repository lives and how to reach it. */
export interface GitRemote {
  readonly url: string
  readonly branch: string
  /** Credential for fetch and push: a token, or `user:password`. */
  readonly token: Option.Option<string>
}

export interface Head {
  readonly commit: string
  readonly tree: string
}

/** One entry of a tree that a sync looks at. */
export interface GitEntry {
  /** Repository path, without a leading slash. */
  readonly path: string
  readonly oid: string
  /** git's file mode: 100644, 100755, 120000 (symlink), 160000 (submodule). */
  readonly mode: string
  readonly type: "blob" | "tree" | "commit"
}

/** A path whose entry differs between two trees; `after` is None when it was deleted. */
export interface GitChange {
  readonly path: string
  readonly before: Option.Option<GitEntry>
  readonly after: Option.Option<GitEntry>
}

/** A file to write (content) or delete (null) in a commit. */
export interface FileEdit {
  readonly path: string
  readonly content: string | null
}

export interface CommitInfo {
  readonly message: string
  readonly authorName: string
  readonly authorEmail: string
  /** Who made the commit, when not its author (the service committing someone's write). */
  readonly committerName?: string
  readonly committerEmail?: string
}

/** One write or delete, to be its own commit. */
export interface Change extends FileEdit {
  readonly info: CommitInfo
}

/** A blob's size, and its content when it is within the size asked for (a larger one is not read). */
export interface Blob {
  readonly size: number
  readonly content: Option.Option<Uint8Array>
}

/** A git operation failed. The message is the service's own description: it never quotes what the remote sent. */
export class GitError extends Schema.TaggedError<GitError>()("GitError", {
  message: Schema.String,
  /** The local file system's error when the store failed (ENOSPC: a forced sync answers 507), never the host's content. */
  cause: Schema.optional(Schema.Unknown)
}) {}

/** The repository's address is not one git traffic may go to (README: "Outbound git traffic"). */
export class RemoteRefused extends Schema.TaggedError<RemoteRefused>()("RemoteRefused", { message: Schema.String }) {}

/** The remote moved since our parent commit: fetch, re-apply, retry. */
export class PushRejected extends Schema.TaggedError<PushRejected>()("PushRejected", { message: Schema.String }) {}

/**
 * Git for the sync engine. Each lab has its own repository store. Two
 * implementations: isomorphic-git on disk speaking smart HTTP
 * (layers/git/GitDisk.ts) and an in-memory one for tests (layers/git/GitMemory.ts).
 */
export class Git extends Context.Tag("Git")<
  Git,
  {
    /**
     * Does the host answer now? The ref advertisement alone, read before a job takes one of the few job slots, so a
     * host that is slow or dead holds none of them (README "Slow or dead git hosts").
     */
    readonly probe: (labId: string, remote: GitRemote) => Effect.Effect<void, GitError>
    /** Fetch the branch tip; None when the repository or the branch is empty. */
    readonly fetch: (labId: string, remote: GitRemote) => Effect.Effect<Option.Option<Head>, GitError>
    /**
     * The entries that differ between two commits (from None: every entry), under
     * `prefix` only when given. Equal subtrees are skipped without being read.
     */
    readonly diff: (
      labId: string,
      from: Option.Option<string>,
      to: string,
      prefix: Option.Option<string>
    ) => Effect.Effect<ReadonlyArray<GitChange>, GitError>
    /** The blob's size, and its content when it has at most `maxBytes` (a larger blob is never read whole). */
    readonly readBlob: (labId: string, oid: string, maxBytes: number) => Effect.Effect<Blob, GitError>
    /**
     * One commit per change, each on the one before, starting on `parent` (None: a root commit). Answers the head
     * after each change: the one before when the change leaves the tree as it was (no commit). Nothing is sent.
     */
    readonly commitAll: (
      labId: string,
      parent: Option.Option<Head>,
      changes: ReadonlyArray<Change>
    ) => Effect.Effect<ReadonlyArray<Option.Option<Head>>, GitError>
    /** Move the remote branch from `expected` to `commit`, fast-forward only. */
    readonly push: (
      labId: string,
      remote: GitRemote,
      commit: string,
      expected: Option.Option<string>
    ) => Effect.Effect<void, GitError | PushRejected>
    /**
     * Is `commit` the remote branch's tip `tip`, or in its history? Tells whether a push whose answer was lost
     * landed. False when it is not found within the history searched (at least the last 1,000 commits).
     */
    readonly reaches: (labId: string, remote: GitRemote, tip: string, commit: string) => Effect.Effect<boolean, GitError>
    /** May git traffic go to this repository URL? Checked when a lab is linked (and again on every connection). */
    readonly checkRemote: (url: string) => Effect.Effect<void, RemoteRefused>
    /** Forget a lab's local repository (after the link changed). */
    readonly reset: (labId: string) => Effect.Effect<void>
  }
>() {}

/** What one job's exchanges with its host report as they go (the transport calls it; layers/git/Transport.ts): a job's slot is kept while bytes move (SlotLease.ts). */
export interface ExchangeMeter {
  /** An exchange begins (a request is made); the function answered marks its end (may be called more than once). */
  readonly begin: () => () => void
  /** Bytes moved: a request's body sent, an answer's bytes received. */
  readonly moved: (bytes: number) => void
  /**
   * Before the answer's bytes are handed on, and at its end (`ending`): resolves at once unless the job is parked
   * and has received PROGRESS_BYTES since, or its exchange ends; then once the job holds its slot again.
   */
  readonly proceed: (ending: boolean) => Promise<void>
}

const NO_METER: ExchangeMeter = { begin: () => () => {}, moved: () => {}, proceed: () => Promise.resolve() }

/** The meter of the job the fiber runs (none outside a job of the good pool: a probe, a retry, a test's git). */
export class HostMeter extends Context.Reference<HostMeter>()("HostMeter", { defaultValue: () => NO_METER }) {}
